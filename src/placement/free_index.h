#pragma once
// FreeIndex: the schedulable (UP) hosts of a snapshot bucketed by free capacity, one bucket
// array per resource dimension, so that a placement looks only at hosts that can hold it.
//
// A host's key in a dimension is its free amount (cpu, memory, disk) or its GPU key (see
// HostState::gpu_key). Keys map to levels on a logarithmic scale with four levels per power of
// two (each bucket spans at most ~19% of its lower bound); Level() is monotone, so a host whose
// level is below Level(ask) cannot fit `ask`, and the hosts at or above it are the only
// candidates. Hosts in the bucket of Level(ask) itself may still be short: each bucket keeps
// its hosts' exact keys beside them (BucketKeys), so a walk skips the short ones without
// looking at the hosts. Insert, Update and Erase are O(1) (swap-remove with stored positions).
//
// Every indexed host also sits in `members()`, a dense list for rotating walks.
//
// Thread-safety: none; owned by one ClusterSnapshot.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/resources.h"

namespace paceline::placement {

class FreeIndex {
 public:
  static constexpr int kLevels = 256;
  using Keys = std::array<int64_t, kNumDims>;

  // 0 for v <= 0, otherwise 1 + 4 * floor(log2 v) + the two bits below the leading one.
  static int Level(int64_t v);

  // `slot` is the host's dense index (HostId value); must not be indexed yet.
  void Insert(uint32_t slot, const Keys& keys);
  // Moves an indexed host to the buckets of its new keys.
  void Update(uint32_t slot, const Keys& keys);
  void Erase(uint32_t slot);
  bool Contains(uint32_t slot) const { return slot < entries_.size() && entries_[slot].present; }

  std::span<const uint32_t> Bucket(Dim d, int level) const {
    return buckets_[static_cast<int>(d)][level];
  }
  // The keys of Bucket(d, level)'s hosts in dimension d, in the same order.
  std::span<const int64_t> BucketKeys(Dim d, int level) const {
    return keys_[static_cast<int>(d)][level];
  }
  // The highest non-empty level of dimension `d` (0 when empty).
  int MaxLevel(Dim d) const { return max_level_[static_cast<int>(d)]; }
  // Number of indexed hosts whose level in `d` is >= `level`.
  uint32_t CountAtLeast(Dim d, int level) const;
  std::span<const uint32_t> members() const { return members_; }
  size_t size() const { return members_.size(); }

 private:
  struct Entry {
    bool present = false;
    std::array<uint8_t, kNumDims> level{};
    std::array<uint32_t, kNumDims> pos{};
    uint32_t member_pos = 0;
  };
  void Place(uint32_t slot, int dim, int level, int64_t key);
  void Remove(uint32_t slot, int dim);

  template <typename T>
  static std::array<std::vector<std::vector<T>>, kNumDims> Levels() {
    std::array<std::vector<std::vector<T>>, kNumDims> b;
    for (auto& v : b) v.resize(kLevels);
    return b;
  }
  std::array<std::vector<std::vector<uint32_t>>, kNumDims> buckets_ = Levels<uint32_t>();
  std::array<std::vector<std::vector<int64_t>>, kNumDims> keys_ = Levels<int64_t>();
  std::vector<Entry> entries_;
  std::vector<uint32_t> members_;
  std::array<int, kNumDims> max_level_{};
};

}  // namespace paceline::placement
