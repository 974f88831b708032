#include "masterd/followed_reads.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "absl/time/clock.h"
#include "common/status.h"

namespace paceline::masterd {

absl::StatusOr<int64_t> FollowedReads::Refresh(const store::StoreMirror& mirror, int64_t at_least,
                                               absl::Time now) {
  if (core_ != nullptr && (rev_ >= mirror.rev() || (rev_ >= at_least && now < next_rebuild_))) {
    return rev_;
  }
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(std::unique_ptr<scheduler::SchedulerCore> core,
                   scheduler::SchedulerCore::Create(config_));
  core->MarkFollower();
  scheduler::Actions dropped;  // a standby writes nothing
  absl::Status restored = core->Restore(mirror.Contents(), now, dropped);
  if (!restored.ok()) {
    std::cerr << "master: the standby's read state cannot be built: " << restored.message()
              << std::endl;
    return restored;
  }
  core_ = std::move(core);
  rev_ = mirror.rev();
  next_rebuild_ = now + std::max(kMinRebuildGap, 4 * (absl::Now() - start));
  return rev_;
}

void FollowedReads::Clear() {
  core_.reset();
  rev_ = store::kNoRevision;
  next_rebuild_ = absl::InfinitePast();
}

}  // namespace paceline::masterd
