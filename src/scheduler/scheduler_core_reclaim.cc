// SchedulerCore: revocable work on slack — the hosts' slack into the placement snapshot, and
// host-level reclaim (see scheduler_core.h and placement/host_state.h for the accounting).
//
// On a host, revocable tasks may hold up to C − R + S (capacity, regular allocations, slack).
// Two things can push them beyond it:
//   - regular work is placed there: it sees C − R and may take capacity revocable tasks hold
//     (cause kRegularWork, checked right after the placement is committed);
//   - the slack shrinks: the regular tasks use more than they did (cause kSlackShrank,
//     checked when the host's new usage report is brought in), or the host's report went
//     stale, so that its slack is unknown and counts as zero (cause kUsageUnknown).
// Either way the excess is taken back at once from the host's revocable tasks, lowest priority
// first, then those not running yet, then the most recently started; a task is only taken if
// it holds some of a dimension still in excess. A revocable gang is preempted whole (its
// members on other hosts too): its members only make sense together. Tasks already being
// stopped count as gone, so a host is never reclaimed twice for the same excess.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "placement/explanation.h"
#include "scheduler/scheduler_core.h"

namespace paceline::scheduler {
namespace {

struct Candidate {
  TaskId task;
  int32_t priority = 0;
  bool running = false;
  absl::Time started;
  Resources held;
};

// "cpu: regular 2 + revocable 1.5 held, above capacity 2 + slack 0.3"
std::string Numbers(const placement::HostState& h, Dim d) {
  using placement::FormatAmount;
  return absl::StrCat(DimName(d), ": regular ", FormatAmount(d, h.regular_allocated()[d]),
                      " + revocable ", FormatAmount(d, h.revocable_allocated()[d]),
                      " held, above capacity ", FormatAmount(d, h.capacity()[d]), " + slack ",
                      FormatAmount(d, h.effective_slack()[d]));
}

}  // namespace

void SchedulerCore::SyncSlack(absl::Time now, Actions& out) {
  for (const UsageTracker::SlackChange& c : usage_.TakeSlackChanges(now)) {
    const hostmgr::TrackedHost* h = hosts_.Find(c.host);
    if (h == nullptr || snapshot_.host(h->id) == nullptr) continue;
    (void)snapshot_.SetHostSlack(h->id, usage_.HostSlack(c.host, now));
    const bool known = c.reported || usage_.HostUsage(c.host, now).has_value();
    ReclaimRevocable(h->id, known ? ReclaimCause::kSlackShrank : ReclaimCause::kUsageUnknown, now,
                     out);
  }
}

void SchedulerCore::ReclaimRevocable(HostId id, ReclaimCause cause, absl::Time now, Actions& out) {
  const placement::HostState* h = snapshot_.host(id);
  if (h == nullptr || h->RevocableExcess().IsZero()) return;
  Resources excess = Resources() - h->FreeFor(true);  // A − C − S, negative where it fits
  std::vector<Candidate> candidates;
  for (const TaskId& t : h->tasks()) {
    const placement::Usage* u = snapshot_.TaskUsage(t);
    const jobmgr::Job* job = jobs_.GetJob(t.job);
    if (u == nullptr || !u->revocable || job == nullptr || t.instance >= job->instances()) {
      continue;
    }
    const jobmgr::TaskRuntime& rt = job->task(t.instance);
    if (rt.state == TaskState::kPreempting || rt.state == TaskState::kKilling) {
      excess -= u->resources;  // on its way out already
      continue;
    }
    candidates.push_back(Candidate{t, job->spec().priority, rt.state == TaskState::kRunning,
                                   rt.started_at, u->resources});
  }
  excess = Max(Resources(), excess);
  if (excess.IsZero()) return;
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.running != b.running) return !a.running;
    if (a.started != b.started) return a.started > b.started;
    return a.task < b.task;
  });
  Dim dim = Dim::kCpu;  // the first dimension in excess, for the message
  for (int d = kNumDims - 1; d >= 0; --d) {
    if (excess.at(d) > 0) dim = static_cast<Dim>(d);
  }
  std::string why;
  switch (cause) {
    case ReclaimCause::kRegularWork:
      why = absl::StrCat("capacity reclaimed for regular work placed on host ", h->name());
      break;
    case ReclaimCause::kSlackShrank:
      why = absl::StrCat("capacity reclaimed: the slack of host ", h->name(),
                         " shrank as its regular tasks use more");
      break;
    case ReclaimCause::kUsageUnknown:
      why = absl::StrCat("capacity reclaimed: host ", h->name(),
                         " has not reported its usage lately, so its slack is unknown");
      break;
  }
  absl::StrAppend(&why, " (", Numbers(*h, dim), ")");
  std::vector<TaskId> victims;
  for (const Candidate& c : candidates) {
    if (excess.IsZero()) break;
    bool useful = false;
    for (int d = 0; d < kNumDims; ++d) useful = useful || (excess.at(d) > 0 && c.held.at(d) > 0);
    if (!useful) continue;
    victims.push_back(c.task);
    excess = Max(Resources(), excess - c.held);
  }
  jobmgr::Effects fx;
  for (const TaskId& v : victims) {
    jobs_.instances().Preempt(v, why, now, fx, jobmgr::TaskReason::kRevoked);
    // The rest of its gang goes with it; the resource manager counts the gang as being freed,
    // so that it takes no other victim for an excess of slack this covers.
    std::optional<resmgr::GangId> g = rm_.GangOf(v);
    if (!g.has_value()) continue;
    (void)rm_.BeginPreemption(*g);
    std::optional<resmgr::GangMembers> gang = rm_.Members(*g);  // a copy: preempting changes it
    if (!gang.has_value()) continue;
    for (const TaskId& m : gang->tasks) {
      if (m == v) continue;
      jobs_.instances().Preempt(m,
                                absl::StrCat("gang member ", v.ToString(), " was revoked: ", why),
                                now, fx, jobmgr::TaskReason::kRevoked);
    }
  }
  absorber_.Absorb(fx, now, out);
}

}  // namespace paceline::scheduler
