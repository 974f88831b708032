#pragma once
// WaterFiller: weighted max-min division of an integer amount, the primitive of entitlement.
//
// Fill(amount, headroom, weight, grant) hands out at most `amount` units to n entries. Entry i
// receives at most headroom[i] more units, and the entries that are not capped by their
// headroom receive amounts proportional to weight[i] ("water-filling": raise a level λ until the
// amount is used up; entry i gets min(headroom[i], weight[i] * λ)). The grants are ADDED to
// grant[i]; the return value is what is left (non-zero only when every entry is capped).
//
// Exactness and determinism: the level is found with long double arithmetic, each uncapped
// entry gets floor(weight * λ), and the few units lost to flooring (at most one per entry) go one
// by one to the uncapped entries in index order, so sum(grants) + left == amount exactly and the
// same input always gives the same output. Cost: O(n log n) (a sort by headroom / weight); O(n)
// when the amount covers every headroom. Scratch buffers are reused: no allocation once warm.
//
// Thread-safety: single-threaded; not thread-safe (scratch buffers).

#include <cstdint>
#include <span>
#include <vector>

namespace paceline::resmgr {

class WaterFiller {
 public:
  // Requires headroom, weight and grant of equal size, headroom[i] >= 0, weight[i] > 0,
  // amount >= 0. Returns the amount left over.
  int64_t Fill(int64_t amount, std::span<const int64_t> headroom, std::span<const double> weight,
               std::span<int64_t> grant);

 private:
  std::vector<uint32_t> order_;
  std::vector<long double> key_;
  std::vector<int64_t> rest_;  // remaining headroom of the uncapped entries; -1 = not uncapped
};

}  // namespace paceline::resmgr
