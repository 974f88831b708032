#include "jobmgr/restart_policy.h"

#include <algorithm>

namespace paceline::jobmgr {

absl::Duration Backoff(const RestartSpec& spec, uint32_t failures) {
  if (failures == 0) return absl::ZeroDuration();
  absl::Duration d = spec.initial_backoff;
  for (uint32_t i = 1; i < failures && d < spec.max_backoff; ++i) d *= 2;
  return std::min(d, spec.max_backoff);
}

RestartSpec EffectiveRestart(const JobSpec& spec, uint32_t instance) {
  RestartSpec r = spec.TaskRef(instance).restart;
  if (spec.type != JobType::kBatch) r.policy = RestartPolicy::kAlways;
  return r;
}

RestartDecision DecideRestart(const RestartSpec& spec, TaskState ended, uint32_t failures,
                              absl::Time now) {
  switch (ended) {
    case TaskState::kLost:
      return {true, now};
    case TaskState::kSucceeded:
      // `failures` counts the exits of a long-running task too (see JobManager::EndRun).
      if (spec.policy == RestartPolicy::kAlways) return {true, now + Backoff(spec, failures)};
      return {false, now};
    case TaskState::kFailed:
      if (spec.policy == RestartPolicy::kAlways) return {true, now + Backoff(spec, failures)};
      if (spec.policy == RestartPolicy::kOnFailure && failures <= spec.max_failures) {
        return {true, now + Backoff(spec, failures)};
      }
      return {false, now};
    default:
      return {false, now};
  }
}

}  // namespace paceline::jobmgr
