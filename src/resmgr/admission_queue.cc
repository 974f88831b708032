#include "resmgr/admission_queue.h"

#include "common/check.h"

namespace paceline::resmgr {

void AdmissionQueue::Push(const QueueEntry& e) {
  PL_CHECK(e.lane < kNumLanes) << "bad lane " << int{e.lane};
  const bool inserted = set_.insert(e).second;
  PL_CHECK(inserted) << "duplicate queue sequence " << e.seq;
  ++lane_count_[e.lane];
  ++version_;
}

bool AdmissionQueue::Erase(const QueueEntry& e) {
  auto it = set_.find(e);
  if (it == set_.end()) return false;
  Erase(it);
  return true;
}

AdmissionQueue::const_iterator AdmissionQueue::Erase(const_iterator it) {
  --lane_count_[it->lane];
  ++version_;
  return set_.erase(it);
}

}  // namespace paceline::resmgr
