#include "jobmgr/dependencies.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paceline::jobmgr {
namespace {

JobId IdOf(const JobDependency& dep) {
  return DependencyId(dep.job).value_or(JobId(0));  // ids only once resolved
}

bool Accepts(DependencyCondition c, JobState s) {
  switch (c) {
    case DependencyCondition::kSucceeded:
      return s == JobState::kSucceeded;
    case DependencyCondition::kFailed:
      return s == JobState::kFailed || s == JobState::kKilled;
    case DependencyCondition::kFinished:
      return IsTerminal(s);
  }
  return false;
}

absl::string_view Needed(DependencyCondition c) {
  switch (c) {
    case DependencyCondition::kSucceeded:
      return "to succeed";
    case DependencyCondition::kFailed:
      return "to fail or be killed";
    case DependencyCondition::kFinished:
      return "to end";
  }
  return "";
}

DependencyVerdict Judge(const JobSpec& spec, absl::FunctionRef<const Job*(JobId)> find) {
  DependencyVerdict v;
  for (const JobDependency& dep : spec.depends_on) {
    const Job* d = find(IdOf(dep));
    if (d == nullptr) {
      return {DependencyVerdict::kNeverMet,
              absl::StrCat("job ", dep.job, " no longer exists; this job needed it ",
                           Needed(dep.condition))};
    }
    JobState s = d->state();
    if (!IsTerminal(s)) {
      if (v.kind == DependencyVerdict::kMet) {
        v = {DependencyVerdict::kWaiting,
             absl::StrCat("waiting for job ", dep.job, " (", JobStateName(s), ") ",
                          Needed(dep.condition))};
      }
      continue;
    }
    if (!Accepts(dep.condition, s)) {
      return {DependencyVerdict::kNeverMet,
              absl::StrCat("job ", dep.job, " ended ", JobStateName(s), "; this job needed it ",
                           Needed(dep.condition))};
    }
  }
  return v;
}

}  // namespace

std::optional<JobId> DependencyId(absl::string_view entry) {
  uint64_t id = 0;
  if (entry.empty() || entry[0] == '0' || !absl::SimpleAtoi(entry, &id)) return std::nullopt;
  return JobId(id);
}

std::string WhyHeld(const Job& job, absl::FunctionRef<const Job*(JobId)> find) {
  return Judge(job.spec(), find).why;
}

bool WaitsForDependencies(const Job& job) {
  return !job.spec().depends_on.empty() && job.instances() > 0 &&
         job.task(0).state == TaskState::kPending &&
         job.task(0).reason == TaskReason::kWaitingForDependencies;
}

const Job* Dependencies::Find(JobId id) const { return jobs_.Get(id); }

void Dependencies::Hold(MutableJob& job, absl::Time now, Effects& fx) {
  DependencyVerdict v = Judge(job.view().spec(), [this](JobId id) { return Find(id); });
  if (v.kind == DependencyVerdict::kWaiting) {
    for (uint32_t i = 0; i < job.view().instances(); ++i) {
      life_.Transition(job, i, TaskState::kPending, TaskReason::kWaitingForDependencies, v.why, now,
                       fx, true);
    }
    for (const JobDependency& dep : job.view().spec().depends_on) {
      held_on_[IdOf(dep)].insert(job.view().id());
    }
    return;
  }
  Decide(job, v, now, fx);  // decided at once: the job never waits
}

void Dependencies::NoteRestoredHeld(JobId id) {
  const Job* job = jobs_.Get(id);
  if (job == nullptr) return;
  for (const JobDependency& dep : job->spec().depends_on) held_on_[IdOf(dep)].insert(id);
}

void Dependencies::SettleAll(absl::Time now, Effects& fx) {
  absl::btree_set<JobId> held;
  for (const auto& [dep, waiting] : held_on_) held.insert(waiting.begin(), waiting.end());
  for (JobId id : held) {
    if (MutableJob* job = jobs_.Find(id); job != nullptr) SettleJob(*job, now, fx);
  }
}

void Dependencies::Settle(absl::Time now, Effects& fx) {
  std::vector<JobId> ended = life_.TakeEndedJobs();
  if (held_on_.empty()) return;
  absl::btree_set<JobId> touched;
  for (JobId id : ended) {
    const Job* job = jobs_.Get(id);
    if (job == nullptr || !IsTerminal(job->state())) continue;  // restarted since
    if (auto it = held_on_.find(id); it != held_on_.end()) {
      touched.insert(it->second.begin(), it->second.end());
    }
  }
  for (JobId id : touched) {
    if (MutableJob* job = jobs_.Find(id); job != nullptr) SettleJob(*job, now, fx);
  }
}

std::vector<JobId> Dependencies::HeldOn(JobId id) const {
  std::vector<JobId> out;
  if (auto it = held_on_.find(id); it != held_on_.end()) {
    for (JobId w : it->second) {
      const Job* job = jobs_.Get(w);
      if (job != nullptr && WaitsForDependencies(*job)) out.push_back(w);
    }
  }
  return out;
}

void Dependencies::SettleJob(MutableJob& job, absl::Time now, Effects& fx) {
  if (!WaitsForDependencies(job.view())) {  // killed meanwhile, or settled already
    Forget(job.view());
    return;
  }
  DependencyVerdict v = Judge(job.view().spec(), [this](JobId id) { return Find(id); });
  if (v.kind == DependencyVerdict::kWaiting) return;
  Forget(job.view());
  Decide(job, v, now, fx);
}

void Dependencies::Decide(MutableJob& job, const DependencyVerdict& v, absl::Time now,
                          Effects& fx) {
  const JobId id = job.view().id();
  for (uint32_t i = 0; i < job.view().instances(); ++i) {
    if (v.kind == DependencyVerdict::kMet) {
      life_.Transition(job, i, TaskState::kPending, TaskReason::kDependenciesMet,
                       "every dependency ended as required", now, fx, true);
      fx.enqueue.push_back(TaskId{id, i});
    } else {
      job.mutable_task(i).finished_at = now;
      life_.Transition(job, i, TaskState::kFailed, TaskReason::kDependencyNeverMet, v.why, now, fx,
                       true);
    }
  }
}

void Dependencies::Forget(const Job& job) {
  for (const JobDependency& dep : job.spec().depends_on) {
    auto it = held_on_.find(IdOf(dep));
    if (it == held_on_.end()) continue;
    it->second.erase(job.id());
    if (it->second.empty()) held_on_.erase(it);
  }
}

}  // namespace paceline::jobmgr
