#include "scheduler/cron_runs.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/task_state.h"
#include "common/units.h"
#include "scheduler/cron_policy.h"
#include "scheduler/job_control.h"
#include "spec/schedule_spec.h"

namespace paceline::scheduler {
namespace {

// The cron job and tick of a run, from its labels.
std::optional<std::pair<JobId, absl::Time>> RunLabels(const JobSpec& spec) {
  auto job = spec.labels.find(std::string(kCronJobLabel));
  auto tick = spec.labels.find(std::string(kCronTickLabel));
  if (job == spec.labels.end() || tick == spec.labels.end()) return std::nullopt;
  uint64_t id = 0;
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(job->second, &id) || !absl::SimpleAtoi(tick->second, &seconds)) {
    return std::nullopt;
  }
  return std::make_pair(JobId(id), absl::FromUnixSeconds(seconds));
}

CronRun::Phase PhaseOf(const jobmgr::Job& job) {
  switch (job.state()) {
    case JobState::kSucceeded:
      return CronRun::Phase::kSucceeded;
    case JobState::kFailed:
    case JobState::kKilled:
      return CronRun::Phase::kFailed;
    default:
      return CronRun::Phase::kLive;
  }
}

std::string Local(absl::Time t, const absl::TimeZone& zone) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S %Z", t, zone);
}

}  // namespace

void CronRuns::Rebuild() {
  templates_.clear();
  run_of_.clear();
  orphans_.clear();
  seen_ = JobId(0);
  Discover();
}

void CronRuns::Discover() {
  jobs_.ForEachJobAfter(seen_, [&](const jobmgr::Job& job) {
    seen_ = job.id();
    if (job.spec().schedule) {
      Template& t = templates_[job.id()];
      t.handled = job.origin().created_at;
      return true;
    }
    std::optional<std::pair<JobId, absl::Time>> run = RunLabels(job.spec());
    if (!run) return true;
    auto t = templates_.find(run->first);
    if (t == templates_.end()) {
      orphans_[job.id()] = true;
      return true;
    }
    t->second.runs[job.id()] = run->second;
    t->second.handled = std::max(t->second.handled, run->second);
    run_of_[job.id()] = run->first;
    return true;
  });
}

void CronRuns::Refresh(const jobmgr::Job& job, Template& t) {
  if (t.version == job.version()) return;
  t.version = job.version();
  t.expr.reset();
  t.error.clear();
  const ScheduleSpec& s = *job.spec().schedule;
  absl::StatusOr<cron::CronExpression> e = cron::CronExpression::Parse(s.cron);
  absl::StatusOr<absl::TimeZone> z = cron::LoadZone(s.time_zone);
  if (!e.ok() || !z.ok()) {
    t.error = absl::StrCat("its schedule cannot tick on this master: ",
                           (!e.ok() ? e.status() : z.status()).message());
    t.next.reset();
    return;
  }
  t.expr = *std::move(e);
  t.zone = *z;
  t.next = t.expr->NextTick(t.handled, t.zone);
}

void CronRuns::Tick(absl::Time now, Actions& out) {
  Discover();
  for (auto it = templates_.begin(); it != templates_.end();) {
    Template& t = it->second;
    const jobmgr::Job* job = jobs_.GetJob(it->first);
    if (job == nullptr) {  // deleted: its runs go with it, the live ones once they end
      for (const auto& [run, tick] : t.runs) {
        orphans_[run] = true;
        run_of_.erase(run);
      }
      it = templates_.erase(it);
      continue;
    }
    Refresh(*job, t);
    if (job->goal() != records::JobGoal::kKill && t.expr) Step(*job, t, now, out);
    ++it;
  }
  if (!orphans_.empty()) DropOrphans(out);
}

void CronRuns::Step(const jobmgr::Job& job, Template& t, absl::Time now, Actions& out) {
  const ScheduleSpec& s = *job.spec().schedule;
  bool due = t.next && *t.next <= now;
  bool over_kept = t.runs.size() > size_t{s.keep_succeeded} + s.keep_failed + 1;
  if (!due && !over_kept) return;
  std::vector<CronRun> runs;
  runs.reserve(t.runs.size());
  for (auto r = t.runs.begin(); r != t.runs.end();) {
    const jobmgr::Job* run = jobs_.GetJob(r->first);
    if (run == nullptr) {  // deleted meanwhile (by its user, while not the newest)
      run_of_.erase(r->first);
      r = t.runs.erase(r);
      continue;
    }
    runs.push_back({r->first, r->second, PhaseOf(*run)});
    ++r;
  }
  CronDecision d = DecideCron(s, *t.expr, t.zone, t.handled, runs, now);
  for (JobId id : d.kill) (void)control_.KillJob(id, now, out);
  if (d.create) {
    CreateRun(job, t, *d.create, now, out);
  } else if (d.skipped) {
    t.last =
        absl::StrCat("the tick of ", Local(*d.skipped, t.zone), " was skipped: ", d.why_skipped);
  }
  for (JobId id : d.purge) {
    if (control_.DeleteJob(id, out).ok()) {
      t.runs.erase(id);
      run_of_.erase(id);
    }
  }
  t.handled = d.handled;
  t.next = d.next_tick;
}

void CronRuns::CreateRun(const jobmgr::Job& job, Template& t, absl::Time tick, absl::Time now,
                         Actions& out) {
  JobSpec spec = job.spec();
  spec.schedule.reset();
  spec.name = RunName(job.spec().name, tick, t.zone, t.expr->has_seconds());
  spec.labels[std::string(kCronJobLabel)] = absl::StrCat(job.id().value());
  spec.labels[std::string(kCronTickLabel)] = absl::StrCat(absl::ToUnixSeconds(tick));
  absl::StatusOr<JobId> id =
      control_.CreateJob(std::move(spec), job.pool(), now, out, job.origin().owner);
  if (!id.ok()) {
    t.last = absl::StrCat("the run of ", Local(tick, t.zone),
                          " could not be created: ", id.status().message());
    return;
  }
  t.runs[*id] = tick;
  run_of_[*id] = job.id();
  seen_ = std::max(seen_, *id);
  t.last = absl::StrCat("the tick of ", Local(tick, t.zone), " created run ", id->value());
}

void CronRuns::DropOrphans(Actions& out) {
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    const jobmgr::Job* run = jobs_.GetJob(it->first);
    if (run == nullptr) {
      it = orphans_.erase(it);
    } else if (PhaseOf(*run) != CronRun::Phase::kLive && control_.DeleteJob(it->first, out).ok()) {
      it = orphans_.erase(it);
    } else {
      ++it;
    }
  }
}

std::string CronRuns::Describe(JobId id) const {
  auto it = templates_.find(id);
  const jobmgr::Job* job = jobs_.GetJob(id);
  if (it == templates_.end() || job == nullptr || !job->spec().schedule) return "";
  const Template& t = it->second;
  if (!t.error.empty()) return absl::StrCat("a cron job; ", t.error);
  std::string out = "a cron job: its runs are jobs of their own (paceline job runs)";
  if (job->spec().schedule->suspend) {
    absl::StrAppend(&out, "; suspended, no new runs");
  } else if (t.next) {
    absl::StrAppend(&out, "; next tick ", Local(*t.next, t.zone));
  }
  if (!t.last.empty()) absl::StrAppend(&out, "; ", t.last);
  return out;
}

bool CronRuns::IsNewestRun(JobId job) const {
  auto r = run_of_.find(job);
  if (r == run_of_.end()) return false;
  auto t = templates_.find(r->second);
  if (t == templates_.end() || t->second.runs.empty()) return false;
  JobId newest = t->second.runs.begin()->first;
  absl::Time newest_tick = t->second.runs.begin()->second;
  for (const auto& [id, tick] : t->second.runs) {
    if (tick >= newest_tick) {
      newest = id;
      newest_tick = tick;
    }
  }
  return newest == job;
}

std::optional<absl::Time> CronRuns::Handled(JobId job) const {
  auto it = templates_.find(job);
  if (it == templates_.end()) return std::nullopt;
  return it->second.handled;
}

}  // namespace paceline::scheduler
