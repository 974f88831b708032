#pragma once
// DecideCron: what a cron job (docs/specs.md "Cron jobs") does at `now`, as a pure function of
// its schedule, the last tick it handled, and its runs. CronRuns (cron_runs.h) applies it.
//
//   due  = the LATEST tick t of the expression with  handled < t <= now  (none: nothing to do;
//          the earlier missed ticks are dropped, so at most one late run follows an outage)
//   due, suspended                                   -> skipped ("suspended")
//   due, now - due > starting_deadline               -> skipped (missed its deadline)
//   due, a live run, concurrency forbid              -> skipped (the live run named)
//   due, live runs, concurrency replace              -> kill them, create a run for `due`
//   due, otherwise                                   -> create a run for `due`
// `handled` becomes `due` whatever the outcome, so no tick is looked at twice; it never moves
// back, so when the clock goes back nothing runs until it passes `handled` again.
//
// Finished runs beyond keep_succeeded (SUCCEEDED) and keep_failed (FAILED, KILLED) are purged,
// oldest tick first; the run with the newest tick is never purged, since after a restart of the
// master it is what tells which tick ran last.
//
// Cost: O(runs) plus the ticks looked at, which are at most those of a window around `now`
// (LatestTick) however long the outage. Thread-safety: pure.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/ids.h"
#include "cron/cron_expression.h"
#include "spec/job_spec.h"

namespace paceline::scheduler {

struct CronRun {
  enum class Phase { kLive, kSucceeded, kFailed };  // failed: FAILED or KILLED
  JobId id;
  absl::Time tick;
  Phase phase = Phase::kLive;
};

struct CronDecision {
  std::optional<absl::Time> create;   // a run for this tick
  std::vector<JobId> kill;            // live runs to kill first (replace)
  std::vector<JobId> purge;           // finished runs beyond the keep limits
  std::optional<absl::Time> skipped;  // a due tick that does not run, and why
  std::string why_skipped;
  absl::Time handled;                   // the last tick handled now
  std::optional<absl::Time> next_tick;  // the first tick after `handled`
};

// The latest tick t with after < t <= now; nullopt if none.
std::optional<absl::Time> LatestTick(const cron::CronExpression& e, const absl::TimeZone& zone,
                                     absl::Time after, absl::Time now);

CronDecision DecideCron(const ScheduleSpec& schedule, const cron::CronExpression& e,
                        const absl::TimeZone& zone, absl::Time handled,
                        absl::Span<const CronRun> runs, absl::Time now);

}  // namespace paceline::scheduler
