#include "spec/did_you_mean.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"

namespace paceline {
namespace {

std::string Fold(absl::string_view s) {
  std::string out = absl::AsciiStrToLower(s);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

int MaxDistance(size_t length) {
  if (length >= 10) return 3;
  if (length >= 5) return 2;
  return 1;
}

}  // namespace

int EditDistance(absl::string_view a, absl::string_view b) {
  // Three rows of the dynamic programme: i-2, i-1 and i.
  std::vector<int> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);  // a transposition
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::optional<std::string> ClosestMatch(absl::string_view word,
                                        std::span<const absl::string_view> candidates) {
  // Words far longer than any key are not typos; skip the quadratic work on them.
  if (word.empty() || word.size() > 64) return std::nullopt;
  std::string folded = Fold(word);
  std::optional<std::string> best;
  int best_distance = MaxDistance(word.size()) + 1;
  for (absl::string_view candidate : candidates) {
    std::string c = Fold(candidate);
    if (c == folded) return std::string(candidate);
    int d = EditDistance(folded, c);
    if (d < best_distance && d < static_cast<int>(std::min(folded.size(), c.size()))) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace paceline
