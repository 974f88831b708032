#pragma once
// Lowercase hex: the form of tokens' ids and secrets, key ids and sealed values.
//
// IsLowerHex("0a9f") -> true; IsLowerHex("0A") -> false; IsLowerHex("") -> true (callers check
// the length they expect). Bytes to hex and back are absl's (absl/strings/escaping.h).
//
// Thread-safety: pure functions.

#include "absl/strings/string_view.h"

namespace paceline {

// Whether every character of `s` is one of 0-9 a-f.
inline bool IsLowerHex(absl::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace paceline
