#pragma once
// Gzip members in memory (zlib): one member out of a buffer, and every member of a buffer back
// into one text.
//
// Thread-safety: pure functions.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::archive {

// One complete gzip member holding `data`.
std::string GzipMember(absl::string_view data);

// The concatenated contents of the gzip members in `data`; DATA_LOSS when a member is corrupt
// or cut short.
absl::StatusOr<std::string> Gunzip(absl::string_view data);

}  // namespace paceline::archive
