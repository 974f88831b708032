#pragma once
// Field paths name a place in a spec in error messages: `task.resources.memory`,
// `task.constraints[1].op`, `instance_overrides.0.command`, `labels["odd key"]`.
//
// The YAML parser records where each path sits in the file, and the validators report errors
// by path, so both must build paths with these functions.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace paceline {

// A map key below `parent`: "parent.key", or `parent["key"]` (C-escaped) when the key holds
// characters other than letters, digits, '_', '-' and '/' (or is empty).
inline std::string ChildPath(absl::string_view parent, absl::string_view key) {
  bool plain = !key.empty() && key.size() <= 128;
  for (char c : key) {
    plain &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || c == '/';
  }
  if (!plain) {
    absl::string_view shown = key.substr(0, 128);
    return absl::StrCat(parent, "[\"", absl::CHexEscape(shown), key.size() > 128 ? "..." : "",
                        "\"]");
  }
  if (parent.empty()) return std::string(key);
  return absl::StrCat(parent, ".", key);
}

// An element of a sequence: "parent[i]".
inline std::string IndexPath(absl::string_view parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

}  // namespace paceline
