#pragma once
// "Did you mean X?" hints for misspelled keys and enum values.
//
// ClosestMatch returns the candidate nearest to `word` when it is close enough to be a likely
// typo: the same after folding case and '-'/'_', or within a small edit distance (see
// EditDistance; at most 1 for short words, 2 from 5 characters, 3 from 10). Ties go to the earlier
// candidate, so callers list candidates in the order users most often mean them.
//
// Thread-safety: pure functions.

#include <optional>
#include <span>
#include <string>

#include "absl/strings/string_view.h"

namespace paceline {

// The edit distance between two byte strings: insertions, deletions, substitutions and swaps
// of adjacent characters each cost 1 (optimal string alignment distance).
int EditDistance(absl::string_view a, absl::string_view b);

std::optional<std::string> ClosestMatch(absl::string_view word,
                                        std::span<const absl::string_view> candidates);

}  // namespace paceline
