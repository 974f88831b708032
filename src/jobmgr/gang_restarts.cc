#include "jobmgr/gang_restarts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace paceline::jobmgr {
namespace {

constexpr absl::string_view kCompletesWithInstanceZero = "the job completes with instance 0";

std::string Joined(const std::string& message, const std::string& cause) {
  return message.empty() ? cause : absl::StrCat(message, "; ", cause);
}

// A run stopped on purpose for good, or for its gang's restart: it never restarts on its own.
bool StoppedByPolicy(TaskReason r) {
  return r == TaskReason::kGangRestart || r == TaskReason::kGangFailed ||
         r == TaskReason::kJobCompleted;
}

}  // namespace

bool RestartsAsGang(const JobSpec& spec) {
  return spec.gang.restart == GangRestart::kGang && spec.sla.min_running_instances > 1;
}

GangRestarts::Range GangRestarts::GangOf(const Job& job, uint32_t instance) {
  const uint32_t size = std::max<uint32_t>(1, job.spec().sla.min_running_instances);
  const uint32_t first = instance / size * size;
  return Range{first, std::min(first + size, job.instances())};
}

bool GangRestarts::Restarting(const Job& job, uint32_t instance) {
  if (!RestartsAsGang(job.spec())) return false;
  const Range g = GangOf(job, instance);
  for (uint32_t m = g.first; m < g.end; ++m) {
    if (job.task(m).reason == TaskReason::kGangRestart) return true;
  }
  return false;
}

void GangRestarts::EndRun(MutableJob& job, uint32_t i, TaskState ended, TaskReason reason,
                          const std::string& message, absl::Time now, Effects& fx) {
  const Job& v = job.view();
  const TaskRuntime& t = v.task(i);
  const bool being_stopped = t.state == TaskState::kKilling;
  if (being_stopped && StoppedByPolicy(t.reason)) {
    // Stopped for its gang's restart, a failed gang or a completed job: it ends with that
    // reason and cause, and never runs again on its own (even when its host was lost).
    const TaskReason why = t.reason;
    auto cause = causes_.find(Key{v.id(), GangOf(v, i).first});
    std::string text = why == TaskReason::kJobCompleted ? std::string(kCompletesWithInstanceZero)
                       : cause != causes_.end()         ? cause->second
                                                        : message;
    life_.StopRun(job, i, ended == TaskState::kLost ? TaskState::kLost : TaskState::kKilled, why,
                  text, now, fx);
    if (why == TaskReason::kGangRestart) RelaunchIfStopped(job, i, now, fx);
  } else if (RestartsAsGang(v.spec()) && !t.restart_requested &&
             v.goal() == records::JobGoal::kRun && !being_stopped &&
             (t.state == TaskState::kPreempting || ended == TaskState::kFailed ||
              ended == TaskState::kLost ||
              (v.spec().type != JobType::kBatch && ended == TaskState::kSucceeded))) {
    OnFailure(job, i, ended, reason, message, now, fx);
  } else {
    life_.EndRun(job, i, ended, reason, message, now, fx);
  }
  if (i == 0) CompleteWithInstanceZero(job, now, fx);
  // A gang that stopped for good (failed, or its job killed) keeps no cause.
  const Range g = GangOf(v, i);
  if (auto it = causes_.find(Key{v.id(), g.first}); it != causes_.end()) {
    bool live = false;
    for (uint32_t m = g.first; m < g.end && !live; ++m) live = !IsTerminal(v.task(m).state);
    if (!live) causes_.erase(it);
  }
}

void GangRestarts::OnFailure(MutableJob& job, uint32_t i, TaskState ended, TaskReason reason,
                             const std::string& message, absl::Time now, Effects& fx) {
  const Job& v = job.view();
  const Range g = GangOf(v, i);
  // A member's failure uses the budget; a member preempted, moved off a draining host, revoked
  // or lost with its host does not (nothing the job did: as torchrun's membership changes).
  const bool counts = v.task(i).state != TaskState::kPreempting && ended != TaskState::kLost;
  uint32_t used = 0;
  for (uint32_t m = g.first; m < g.end; ++m) used += v.task(m).failures;
  const uint32_t budget = v.spec().gang.max_restarts;
  const std::string what = Describe(v, i, ended, reason, message);
  if (counts && used >= budget) {
    const std::string cause =
        absl::StrCat("no gang restarts left (", used, " of ", budget, " used): ", what);
    causes_[Key{v.id(), g.first}] = cause;
    // The gang fails, and so does the job: a long-running member's exit 0 too ends FAILED.
    const bool failed = ended == TaskState::kFailed;
    life_.StopRun(job, i, TaskState::kFailed, failed ? reason : TaskReason::kGangFailed,
                  Joined(message, cause), now, fx);
    StopOthers(job, g, i, TaskReason::kGangFailed, cause, now, fx);
    return;
  }
  const std::string cause = counts
                                ? absl::StrCat("gang restart ", used + 1, "/", budget, ": ", what)
                                : absl::StrCat("gang restart (not counted): ", what);
  causes_[Key{v.id(), g.first}] = cause;
  life_.StopRun(job, i, ended, reason, Joined(message, cause), now, fx);
  // A long-running member's exit 0 is a failure too (StopRun counts only FAILED ends).
  if (counts && ended != TaskState::kFailed) ++job.mutable_task(i).failures;
  StopOthers(job, g, i, TaskReason::kGangRestart, cause, now, fx);
  RelaunchIfStopped(job, i, now, fx);
}

void GangRestarts::StopOthers(MutableJob& job, Range g, uint32_t except, TaskReason reason,
                              const std::string& cause, absl::Time now, Effects& fx) {
  for (uint32_t m = g.first; m < g.end; ++m) {
    const TaskState s = job.view().task(m).state;
    if (m == except || IsTerminal(s)) continue;
    job.mutable_task(m).restart_requested = false;
    if (s == TaskState::kKilling) {
      // Already being stopped (by the user, say): it now stops for the gang, and says so.
      life_.Transition(job, m, TaskState::kKilling, reason, cause, now, fx, true);
    } else {
      life_.KillTask(job, m, reason, now, fx, cause);
    }
  }
}

void GangRestarts::RelaunchIfStopped(MutableJob& job, uint32_t instance, absl::Time now,
                                     Effects& fx) {
  const Job& v = job.view();
  const Range g = GangOf(v, instance);
  uint32_t attempt = 0;
  for (uint32_t m = g.first; m < g.end; ++m) {
    if (!IsTerminal(v.task(m).state)) return;
    attempt = std::max(attempt, v.task(m).gang_attempt);
  }
  auto it = causes_.find(Key{v.id(), g.first});
  const std::string cause =
      it != causes_.end() ? it->second : absl::StrCat("gang attempt ", attempt + 1);
  if (it != causes_.end()) causes_.erase(it);
  if (v.goal() != records::JobGoal::kRun || Completed(v)) return;
  // One Effects, members in order: the scheduler enqueues them as one gang.
  for (uint32_t m = g.first; m < g.end; ++m) {
    job.mutable_task(m).gang_attempt = attempt + 1;
    life_.StartNewRun(job, m, now, now, fx, cause);
  }
}

bool GangRestarts::Completed(const Job& job) {
  return job.spec().completion == Completion::kInstanceZero && job.spec().type == JobType::kBatch &&
         job.instances() > 0 && IsTerminal(job.task(0).state) && !Restarting(job, 0);
}

void GangRestarts::CompleteWithInstanceZero(MutableJob& job, absl::Time now, Effects& fx) {
  const Job& v = job.view();
  if (v.goal() != records::JobGoal::kRun || !Completed(v)) return;
  const std::string why(kCompletesWithInstanceZero);
  for (uint32_t m = 1; m < v.instances(); ++m) {
    const TaskRuntime& t = v.task(m);
    if (IsTerminal(t.state) || t.reason == TaskReason::kJobCompleted) continue;
    job.mutable_task(m).restart_requested = false;
    if (t.state == TaskState::kKilling) {
      // Being stopped already (for a gang restart, say): it stops for good, and says why.
      life_.Transition(job, m, TaskState::kKilling, TaskReason::kJobCompleted, why, now, fx, true);
    } else {
      life_.KillTask(job, m, TaskReason::kJobCompleted, now, fx, why);
    }
  }
}

std::string GangRestarts::Describe(const Job& job, uint32_t i, TaskState ended, TaskReason reason,
                                   const std::string& message) const {
  const TaskRuntime& t = job.task(i);
  const std::string who = absl::StrCat("instance ", i);
  if (t.state == TaskState::kPreempting) {
    switch (t.reason) {
      case TaskReason::kHostDraining:
        return absl::StrCat(who, " was moved off a draining host");
      case TaskReason::kRevoked:
        return absl::StrCat(who, " was revoked (its host took its capacity back)");
      default:
        return absl::StrCat(who, " was preempted");
    }
  }
  if (ended == TaskState::kLost) {
    return t.host == kNoHost ? absl::StrCat(who, " lost its host")
                             : absl::StrCat(who, " lost its host ", hosts_.Name(t.host));
  }
  if (ended == TaskState::kSucceeded) return absl::StrCat(who, " exited: exit 0");
  switch (reason) {
    case TaskReason::kLaunchFailed:
      return message.empty() ? absl::StrCat(who, " failed to start")
                             : absl::StrCat(who, " failed to start: ", message);
    case TaskReason::kOomKilled:
      return absl::StrCat(who, " failed: out of memory");
    default:
      break;
  }
  // The exit the agent reported (OnStatus records it before the run ends).
  if (t.signal != 0) return absl::StrCat(who, " failed: signal ", t.signal);
  return absl::StrCat(who, " failed: exit ", t.exit_code);
}

void GangRestarts::NoteRestored(const Job& job, const records::TaskRecord& r) {
  if (r.message.empty() || r.id.instance >= job.instances()) return;
  if (r.reason != TaskReasonName(TaskReason::kGangRestart) &&
      r.reason != TaskReasonName(TaskReason::kGangFailed)) {
    return;
  }
  causes_[Key{job.id(), GangOf(job, r.id.instance).first}] = r.message;
}

void GangRestarts::Resume(MutableJob& job, absl::Time now, Effects& fx) {
  const Job& v = job.view();
  if (!RestartsAsGang(v.spec())) return;
  const uint32_t size = v.spec().sla.min_running_instances;
  for (uint32_t first = 0; first < v.instances(); first += size) {
    if (Restarting(v, first)) RelaunchIfStopped(job, first, now, fx);
  }
}

}  // namespace paceline::jobmgr
