#pragma once
// HealthMonitor: runs one run's health checks on the runtime's event loop — a HealthChecker
// (the state machine) driven by a HealthProbe (the I/O), registered with the Poller while a
// probe is in flight. State changes go to `on_change` (the runner turns them into HEALTH events,
// or READINESS events for a readiness check: HEALTHY is READY, UNHEALTHY is NOT_READY).
//
// Thread-safety: runtime thread only.

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "agent/base/poller.h"
#include "agent/health/health_checker.h"
#include "agent/health/health_probe.h"

namespace paceline::agent {

class HealthMonitor {
 public:
  using OnChange = std::function<void(HealthState)>;
  using NowFn = std::function<absl::Time()>;
  using Reschedule = std::function<void()>;

  // `reschedule` is called when NextDeadline() changed outside OnTimer (a probe finished).
  HealthMonitor(const HealthSpec& spec, std::unique_ptr<HealthProbe> probe, Poller& poller,
                NowFn now, OnChange on_change, Reschedule reschedule, absl::Time running_since);
  ~HealthMonitor();
  HealthMonitor(const HealthMonitor&) = delete;
  HealthMonitor& operator=(const HealthMonitor&) = delete;

  // Starts a due probe or times out a running one.
  void OnTimer(absl::Time now);
  // When OnTimer next has something to do.
  absl::Time NextDeadline() const;
  HealthState state() const { return checker_.state(); }
  const HealthChecker& checker() const { return checker_; }

 private:
  void Finish(bool healthy, absl::Time now);
  void Unwatch();

  HealthChecker checker_;
  std::unique_ptr<HealthProbe> probe_;
  Poller& poller_;
  NowFn now_;
  OnChange on_change_;
  Reschedule reschedule_;
  bool running_ = false;
  absl::Time probe_deadline_ = absl::InfiniteFuture();
  uint64_t watch_id_ = 0;
};

}  // namespace paceline::agent
