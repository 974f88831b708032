#include "resmgr/water_fill.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace paceline::resmgr {

int64_t WaterFiller::Fill(int64_t amount, std::span<const int64_t> headroom,
                          std::span<const double> weight, std::span<int64_t> grant) {
  const size_t n = headroom.size();
  PL_CHECK(weight.size() == n && grant.size() == n) << "size mismatch";
  PL_CHECK(amount >= 0) << "negative amount " << amount;
  if (amount == 0 || n == 0) return amount;

  // Nobody can use more than the whole amount: clamping keeps sums small and exact.
  order_.clear();
  __int128 total = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t h = std::min(headroom[i], amount);
    if (h > 0) {
      order_.push_back(static_cast<uint32_t>(i));
      total += h;
    }
  }
  if (total <= amount) {
    for (uint32_t i : order_) grant[i] += std::min(headroom[i], amount);
    return amount - static_cast<int64_t>(total);
  }

  // Entries saturate in increasing order of headroom / weight.
  if (key_.size() < n) key_.resize(n);
  long double weight_sum = 0;
  for (uint32_t i : order_) {
    key_[i] = static_cast<long double>(std::min(headroom[i], amount)) / weight[i];
    weight_sum += weight[i];
  }
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    return key_[a] < key_[b] || (key_[a] == key_[b] && a < b);
  });

  int64_t left = amount;
  size_t k = 0;
  for (; k < order_.size(); ++k) {
    const uint32_t i = order_[k];
    const int64_t h = std::min(headroom[i], amount);
    if (static_cast<long double>(h) > static_cast<long double>(left) * weight[i] / weight_sum) {
      break;
    }
    grant[i] += h;
    left -= h;
    weight_sum -= weight[i];
  }
  if (k == order_.size()) return left;  // only reachable through rounding: everyone is capped

  // Everyone from k on is below its cap at the final level left / weight_sum.
  if (rest_.size() < n) rest_.resize(n, -1);
  int64_t given = 0;
  for (size_t m = k; m < order_.size(); ++m) {
    const uint32_t i = order_[m];
    const int64_t h = std::min(headroom[i], amount);
    int64_t g =
        static_cast<int64_t>(std::floor(static_cast<long double>(left) * weight[i] / weight_sum));
    g = std::clamp<int64_t>(g, 0, std::min(h, left - given));
    grant[i] += g;
    given += g;
    rest_[i] = h - g;
  }
  left -= given;
  // The flooring remainder, one unit at a time, in index order.
  while (left > 0) {
    int64_t open = 0;
    for (size_t m = k; m < order_.size(); ++m) open += rest_[order_[m]] > 0 ? 1 : 0;
    if (open == 0) break;
    const int64_t step = std::max<int64_t>(1, left / open);
    for (size_t i = 0; i < n && left > 0; ++i) {
      if (rest_[i] <= 0) continue;
      const int64_t add = std::min({rest_[i], step, left});
      grant[i] += add;
      rest_[i] -= add;
      left -= add;
    }
  }
  for (size_t m = k; m < order_.size(); ++m) rest_[order_[m]] = -1;
  return left;
}

}  // namespace paceline::resmgr
