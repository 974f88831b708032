#include "scheduler/pool_control.h"

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "scheduler/fair_share_seed.h"
#include "spec/pool_path.h"

namespace paceline::scheduler {

absl::Status PoolControl::NoLiveJobs(absl::string_view pool, absl::string_view why) const {
  size_t live = 0;
  const jobmgr::Job* first = nullptr;
  jobs_.ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    if (job.pool() == pool && !IsTerminal(job.state())) {
      if (first == nullptr) first = &job;
      ++live;
    }
    return true;
  });
  if (live == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("pool ", pool, " has ", live, " live job(s) (job ", first->id().value(), " is ",
                   JobStateName(first->state()), ") and ", why));
}

absl::Status PoolControl::CreatePool(const std::string& path, const PoolSpec& spec, Actions& out) {
  if (spec::ValidatePoolPath(path).ok() && path != "/" && !rm_.tree().Find(path).has_value()) {
    const absl::Status leaf = NoLiveJobs(spec::ParentPath(path), "jobs run only in leaf pools");
    if (!leaf.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create pool ", path, ": ", leaf.message()));
    }
  }
  RETURN_IF_ERROR(rm_.CreatePool(path, spec).status());
  out.batch.put_pools.push_back({path, spec});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PoolControl::UpdatePool(const std::string& path,
                                                                 const PoolSpec& spec, bool force,
                                                                 Actions& out) {
  std::optional<absl::Duration> retained;
  if (std::optional<PoolId> id = rm_.tree().Find(path)) {
    retained = rm_.tree().spec(*id).retain_terminal;
  }
  ASSIGN_OR_RETURN(std::vector<std::string> broke, rm_.UpdatePool(path, spec, force));
  out.batch.put_pools.push_back({path, spec});
  // The finished jobs of the subtree expire at other times now.
  if (retained != spec.retain_terminal) retention_.Rewindow();
  return broke;
}

absl::Status PoolControl::DeletePool(const std::string& path, Actions& out) {
  RETURN_IF_ERROR(NoLiveJobs(path, "is not deleted before they end: kill them or let them finish"));
  RETURN_IF_ERROR(rm_.DeletePool(path));
  out.batch.delete_pools.push_back(path);
  return absl::OkStatus();
}

size_t PoolControl::SeedUsage(std::span<const records::UsageRecord> hours,
                              const Resources& capacity, absl::Time now) {
  const std::vector<UsageSeed> seeds = DecayedUsageFromHours(rm_.tree(), hours, capacity, now);
  for (const UsageSeed& s : seeds) {
    // The seeds are made for pools under a fair_share parent, with finite usage: nothing fails.
    const absl::Status status = rm_.SeedUsage(s.pool, s.usage, now);
    PL_CHECK(status.ok()) << status;
  }
  return seeds.size();
}

}  // namespace paceline::scheduler
