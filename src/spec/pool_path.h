#pragma once
// Pool paths: the user-facing names of pools.
//
// A path is "/" (the root) or "/" followed by one or more segments separated by "/", e.g.
// "/ads" or "/ads/training". A segment is 1..64 characters from [A-Za-z0-9._-], starting with
// a letter or a digit. No empty segment, no trailing "/", no "." or ".." segments.
//
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline::spec {

inline constexpr int kMaxPoolNameLength = 64;

// OK, or INVALID_ARGUMENT saying what is wrong with `path`.
absl::Status ValidatePoolPath(absl::string_view path);

// The parent path of a valid non-root path ("/ads/training" -> "/ads", "/ads" -> "/").
absl::string_view ParentPath(absl::string_view path);
// The last segment of a valid non-root path ("/ads/training" -> "training").
absl::string_view BaseName(absl::string_view path);
// Joins a parent path and a child name ("/" + "ads" -> "/ads"). (ChildPath, in field_path.h,
// joins the field paths of a spec.)
std::string ChildPoolPath(absl::string_view parent, absl::string_view name);

}  // namespace paceline::spec
