#pragma once
// HealthChecker: the health state machine of one run, pure (time is passed in, no I/O), so it is
// tested by stepping time. The probes that produce results live in health_probe.h.
//
//            success                      `failures` consecutive failures
//   UNKNOWN ─────────> HEALTHY  <─────┐  ┌──────────────> UNHEALTHY
//      │                  │  success  └──┼── success ────────┘
//      └──────────────────┴──────────────┘
//   (UNKNOWN -> UNHEALTHY also after `failures` consecutive failures; a single failure never
//    changes the state, a single success always makes it HEALTHY.)
//
// Schedule: the first probe starts `initial_delay` after the task started running; each next
// probe starts `interval` after the previous one finished; a probe running longer than `timeout`
// counts as a failure.
//
// Thread-safety: a value owned by one runner.

#include <cstdint>
#include <optional>

#include "absl/time/time.h"
#include "agent/base/task_event.h"
#include "spec/job_spec.h"

namespace paceline::agent {

class HealthChecker {
 public:
  HealthChecker(const HealthSpec& spec, absl::Time running_since);

  absl::Time next_probe() const { return next_; }
  absl::Duration timeout() const { return spec_.timeout; }
  HealthState state() const { return state_; }
  uint32_t consecutive_failures() const { return failures_; }

  // Records the result of a probe that finished at `now`; returns the new state on a change.
  std::optional<HealthState> Record(bool healthy, absl::Time now);

 private:
  HealthSpec spec_;
  HealthState state_ = HealthState::kUnknown;
  uint32_t failures_ = 0;
  absl::Time next_;
};

}  // namespace paceline::agent
