#pragma once
// AdmissionQueue: the queued gangs of one leaf pool and one ledger (regular or revocable), in
// admission order: higher priority first, then first come (enqueue sequence), first served.
//
// Entries are small keys (priority, sequence, slot of the gang record, lane); the gang records
// themselves live in RmState. The queue also counts its entries per lane so an admission pass
// can stop as soon as every lane present is blocked. Push and Erase are O(log n); iteration is
// in order.
//
// Thread-safety: single-threaded; not thread-safe.

#include <array>
#include <cstdint>

#include "absl/container/btree_set.h"
#include "resmgr/types.h"

namespace paceline::resmgr {

struct QueueEntry {
  int32_t priority = 0;
  uint64_t seq = 0;
  uint32_t slot = 0;
  uint8_t lane = 0;
};

struct QueueOrder {
  bool operator()(const QueueEntry& a, const QueueEntry& b) const {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.seq < b.seq;  // sequences are unique
  }
};

class AdmissionQueue {
 public:
  using Set = absl::btree_set<QueueEntry, QueueOrder>;
  using const_iterator = Set::const_iterator;

  void Push(const QueueEntry& e);
  // Removes the entry with e's (priority, seq); returns false when absent.
  bool Erase(const QueueEntry& e);
  // Removes the entry at `it`; returns the iterator to the next entry.
  const_iterator Erase(const_iterator it);

  size_t size() const { return set_.size(); }
  bool empty() const { return set_.empty(); }
  uint32_t lane_count(int lane) const { return lane_count_[lane]; }
  // Changes with every Push and Erase.
  uint64_t version() const { return version_; }
  const_iterator begin() const { return set_.begin(); }
  const_iterator end() const { return set_.end(); }

 private:
  Set set_;
  std::array<uint32_t, kNumLanes> lane_count_{};
  uint64_t version_ = 0;
};

}  // namespace paceline::resmgr
