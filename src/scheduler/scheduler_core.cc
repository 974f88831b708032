#include "scheduler/scheduler_core.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "common/units.h"
#include "hostmgr/maintenance.h"
#include "jobmgr/dependencies.h"
#include "jobmgr/gang_restarts.h"
#include "placement/plan.h"

namespace paceline::scheduler {
namespace {

// Puts the requests of gangs of several tasks first, in their order, then the others, keeping
// `gang` and `key` (one entry per request) in step.
void GangsFirst(std::vector<placement::PlacementRequest>& requests, std::vector<uint64_t>& gang,
                std::vector<uint64_t>& key) {
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto first = std::stable_partition(order.begin(), order.end(),
                                     [&](size_t i) { return requests[i].tasks.size() > 1; });
  if (first == order.begin() || first == order.end()) return;  // nothing moves
  std::vector<placement::PlacementRequest> r;
  std::vector<uint64_t> g;
  std::vector<uint64_t> k;
  r.reserve(order.size());
  for (size_t i : order) {
    r.push_back(std::move(requests[i]));
    g.push_back(gang[i]);
    k.push_back(key[i]);
  }
  requests = std::move(r);
  gang = std::move(g);
  key = std::move(k);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SchedulerCore>> SchedulerCore::Create(CoreConfig config) {
  ASSIGN_OR_RETURN(std::unique_ptr<placement::PlacementEngine> engine,
                   placement::PlacementEngine::Create(config.placement));
  return std::unique_ptr<SchedulerCore>(new SchedulerCore(std::move(config), std::move(engine)));
}

SchedulerCore::SchedulerCore(CoreConfig config, std::unique_ptr<placement::PlacementEngine> engine)
    : config_(std::move(config)),
      rm_(config_.resmgr),
      engine_(std::move(engine)),
      hosts_(config_.host_timeout),
      history_(config_.history) {}

// ---------------------------------------------------------------------------------------------
// Recovery

absl::Status SchedulerCore::Restore(const records::StoreContents& contents, absl::Time now,
                                    Actions& out, const records::TaskBatches& more) {
  std::vector<records::PoolRecord> pools = contents.pools;
  // Parents before children: a parent's path is a prefix of its children's.
  std::sort(pools.begin(), pools.end(),
            [](const auto& a, const auto& b) { return a.path.size() < b.path.size(); });
  for (const records::PoolRecord& p : pools) {
    if (p.path == "/") {
      RETURN_IF_ERROR(rm_.UpdatePool("/", p.spec, /*force=*/true).status());
    } else {
      RETURN_IF_ERROR(rm_.CreatePool(p.path, p.spec).status());
    }
  }
  for (const records::HostRecord& h : contents.hosts) upkeep_.Restore(h, now);
  jobmgr::Effects fx;
  RETURN_IF_ERROR(jobs_.Restore(contents, now, fx, more));
  size_t adoptable = 0;  // tasks whose agents will report them as they register again
  jobs_.ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    if (job.spec().type == JobType::kDaemon) upkeep_.AddDaemonJob(job.id());
    retention_.Restore(job);
    for (int s = 0; s < kNumTaskStates; ++s) {
      if (MayHaveProcess(TaskState(s))) adoptable += job.count(TaskState(s));
    }
    return true;
  });
  // Adopting them then grows nothing: no rehash of millions of entries while the fleet returns.
  rm_.Reserve(adoptable);
  snapshot_.ReserveTasks(adoptable);
  absorber_.Absorb(fx, now, out);
  cron_.Rebuild();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Where a task should go: its volume's host, its previous host during an in-place update

std::optional<placement::PreviousHost> SchedulerCore::InPlaceHost(const jobmgr::Job& job,
                                                                  uint32_t i) const {
  const std::vector<records::UpdateRecord>& updates = job.updates();
  if (updates.empty() || !records::IsActive(updates.back().state)) return std::nullopt;
  if (!updates.back().options.in_place) return std::nullopt;
  uint32_t h = job.task(i).last_host;
  if (h == jobmgr::kNoHost) return std::nullopt;
  const hostmgr::TrackedHost* host = hosts_.Find(jobs_.HostName(h));
  if (host == nullptr) return std::nullopt;
  return placement::PreviousHost{host->id, false};
}

std::optional<HostId> SchedulerCore::VolumeHostOf(const jobmgr::Job& job, uint32_t i) const {
  uint32_t h = job.task(i).volume_host;
  if (h == jobmgr::kNoHost) return std::nullopt;
  const hostmgr::TrackedHost* host = hosts_.Find(jobs_.HostName(h));
  return host != nullptr ? std::optional<HostId>(host->id) : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The cycle

void SchedulerCore::RunCycle(absl::Time now, Actions& out) {
  {
    jobmgr::Effects fx;
    jobs_.Tick(now, fx);
    absorber_.Absorb(fx, now, out);
  }
  cron_.Tick(now, out);
  upkeep_.Tick(now, out);

  resmgr::CycleResult cycle = rm_.RunCycle({agents_.OfferedCapacity(), usage_.AllocatedUnused(now),
                                            config_.resmgr.backfill ? &holds_ : nullptr},
                                           now);
  for (const resmgr::PreemptionDecision& p : cycle.preempted) {
    const std::string& why = p.reason;
    jobmgr::Effects fx;
    for (const TaskId& t : p.tasks) jobs_.instances().Preempt(t, why, now, fx);
    absorber_.Absorb(fx, now, out);
  }
  for (const resmgr::AdmittedGang& a : cycle.admitted) {
    std::optional<resmgr::GangMembers> g = rm_.Members(a.gang);
    if (!g.has_value()) continue;
    jobmgr::Effects fx;
    const std::string note =
        a.backfilled_ahead_of == resmgr::GangId()
            ? std::string()
            : absl::StrCat("backfilled ahead of gang ", a.backfilled_ahead_of.value(),
                           ", which has capacity reserved for later (it ends by then, or fits "
                           "beside it)");
    for (const TaskId& t : g->tasks) jobs_.OnAdmitted(t, now, fx, note);
    absorber_.Absorb(fx, now, out);
    to_place_.push_back(a.gang.value());
  }
  SyncSlack(now, out);
  PlaceAdmitted(now, out);
  holds_.Prune();
  if (history_.Due(now)) RecordHistory(now);
}

void SchedulerCore::RecordHistory(absl::Time now) {
  ClusterPoint c;
  c.at = now;
  c.placed = static_cast<uint32_t>(placements_ - placements_at_last_point_);
  placements_at_last_point_ = placements_;
  jobs_.ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    c.pending += job.count(TaskState::kPending) + job.count(TaskState::kReady);
    c.running += job.count(TaskState::kLaunching) + job.count(TaskState::kRunning);
    return true;
  });
  c.capacity = agents_.OfferedCapacity();
  const resmgr::Allocation& total = rm_.total_allocation();
  c.allocated = total.regular() + total.revocable;
  std::vector<std::pair<std::string, PoolPoint>> pools;
  const resmgr::PoolTree& tree = rm_.tree();
  for (const resmgr::PoolStats& s : rm_.AllStats()) {
    if (!tree.Exists(s.id)) continue;
    pools.emplace_back(tree.path(s.id), PoolPoint{now, s.entitlement, s.allocation, s.demand});
  }
  history_.Add(c, pools);
}

void SchedulerCore::PlaceAdmitted(absl::Time now, Actions& out) {
  if (to_place_.empty()) return;
  std::vector<placement::PlacementRequest> requests;
  std::vector<uint64_t> request_gang;
  std::vector<uint64_t> request_key;  // ExplainKey, when the gang asked an explanation
  absl::flat_hash_map<uint64_t, bool> still_waiting;
  requests.reserve(to_place_.size());
  for (uint64_t gid : to_place_) {
    std::optional<resmgr::GangMembers> g = rm_.Members(resmgr::GangId(gid));
    if (!g.has_value()) continue;
    const jobmgr::Job* job = jobs_.GetJob(g->job);
    if (job == nullptr) continue;
    placement::PlacementRequest req;
    const absl::Time ends_by = jobmgr::DeadlineFrom(*job, now);
    bool ok = true;
    bool has_why = true;  // every member has a reason a later failure may leave standing
    for (const TaskId& t : g->tasks) {
      if (job->task(t.instance).state != TaskState::kReady) continue;
      has_why = has_why && why_.Find(t) != nullptr;
      absl::StatusOr<std::shared_ptr<const placement::TaskShape>> shape =
          shapes_.ShapeOf(*job, t.instance);
      if (!shape.ok()) {
        why_.Set(t, std::string(shape.status().message()));
        ok = false;
        break;
      }
      std::optional<HostId> pin;
      if (job->spec().type == JobType::kDaemon) pin = upkeep_.DaemonHostOf(t);
      if (job->spec().type == JobType::kStateful) pin = VolumeHostOf(*job, t.instance);
      req.tasks.push_back(
          placement::PlacementTask{t, *shape, InPlaceHost(*job, t.instance), pin, gid, ends_by});
    }
    if (!ok || req.tasks.empty()) continue;
    if (retry_.Skip(gid, req, snapshot_)) {  // it would fail again: its explanation stands
      still_waiting[gid] = true;
      continue;
    }
    req.explain = !has_why || retry_.ExplainDue(gid, now, config_.reexplain_after);
    const uint64_t key = req.explain ? ExplainKey(req) : 0;
    if (key != 0 && retry_.Shared(key, now, config_.reexplain_after) != nullptr) {
      req.explain = false;  // a like gang's explanation is fresh: it takes that one
    }
    requests.push_back(std::move(req));
    request_gang.push_back(gid);
    request_key.push_back(key);
  }
  // With backfill, gangs are placed first: admission found hosts with room for all their
  // members (host_holds.h), and the tasks placed before them in the pass could take that room;
  // a single task finds room anywhere.
  if (config_.resmgr.backfill) GangsFirst(requests, request_gang, request_key);
  placement::Plan plan = engine_->Place(requests, snapshot_);
  placement::ApplyResult applied = placement::ApplyPlan(plan, snapshot_);
  absl::flat_hash_map<uint32_t, bool> rejected;
  for (const auto& r : applied.rejected) rejected[r.request_index] = true;

  jobmgr::Effects fx;
  std::vector<HostId> regular_hosts;  // hosts that got regular work: revocable work may go
  for (const placement::Assignment& a : plan.assignments) {
    if (rejected.contains(a.request_index)) continue;
    if (!a.shape->revocable) regular_hosts.push_back(a.host);
    why_.Erase(a.task);
    ++placements_;
    jobmgr::Placement placed{.host = hosts_.Get(a.host).spec.name};
    for (size_t i = 0; i < a.ports.size() && i < a.shape->port_names.size(); ++i) {
      placed.ports.emplace_back(a.shape->port_names[i], a.ports[i]);
    }
    for (const auto& share : a.gpus) placed.gpu_devices.push_back(share.device);
    jobs_.OnPlaced(a.task, std::move(placed), now, fx);
  }
  for (const placement::PendingRequest& p : plan.pending) {
    const uint64_t gid = request_gang[p.request_index];
    const uint64_t key = request_key[p.request_index];
    if (p.explanation.explained) {  // else the gang's explanation stands, or a like gang's
      std::string line = p.explanation.OneLine();
      for (const TaskId& t : p.tasks) why_.Set(t, line);
      retry_.Explained(gid, now);
      if (key != 0) retry_.Share(key, now, std::move(line));
    } else if (const PlacementRetry::SharedWhy* like =
                   key != 0 ? retry_.Shared(key, now, config_.reexplain_after) : nullptr) {
      for (const TaskId& t : p.tasks) why_.Set(t, like->line);
      retry_.Explained(gid, like->at);
    }
    still_waiting[gid] = true;
    // A rejected assignment left capacity that the plan had counted as taken: no bound then.
    if (applied.rejected.empty()) {
      retry_.Failed(gid, requests[p.request_index], p.explanation.gang_placed, snapshot_);
    }
  }
  for (const auto& r : applied.rejected) {
    still_waiting[request_gang[r.request_index]] = true;
    retry_.Forget(request_gang[r.request_index]);
    why_.Set(r.task, absl::StrCat("placement raced: ", r.status.message()));
  }
  std::vector<uint64_t> next;
  for (uint64_t gid : to_place_) {
    if (still_waiting.contains(gid)) next.push_back(gid);
  }
  to_place_ = std::move(next);
  retry_.Keep(to_place_, now, config_.reexplain_after);
  absorber_.Absorb(fx, now, out);
  std::sort(regular_hosts.begin(), regular_hosts.end());
  regular_hosts.erase(std::unique(regular_hosts.begin(), regular_hosts.end()), regular_hosts.end());
  for (HostId h : regular_hosts) ReclaimRevocable(h, ReclaimCause::kRegularWork, now, out);
}

uint64_t SchedulerCore::ExplainKey(const placement::PlacementRequest& req) const {
  if (req.tasks.size() != 1) return 0;
  const placement::PlacementTask& t = req.tasks.front();
  const placement::TaskShape& s = *t.shape;
  // Filters that read the task's own job or host, or hosts held for its gang, answer it alone.
  if (t.previous.has_value() || t.required_host.has_value() || !s.max_per_host.empty() ||
      snapshot_.HoldsHostsFor(t.gang)) {
    return 0;
  }
  return absl::HashOf(s.fit_signature, s.revocable, s.num_ports(), holds_.Rejecting(t.ends_by)) | 1;
}

absl::Duration SchedulerCore::RetentionWindow(const std::string& pool) const {
  const resmgr::PoolTree& tree = rm_.tree();
  std::optional<PoolId> id = tree.Find(pool);
  while (id) {
    if (const auto& w = tree.spec(*id).retain_terminal) return *w;
    if (tree.parent(*id) == *id) break;
    id = tree.parent(*id);
  }
  return config_.retain_terminal;
}

std::string SchedulerCore::WhyPending(TaskId task) const {
  const jobmgr::Job* job = jobs_.GetJob(task.job);
  if (job == nullptr || task.instance >= job->instances()) return "";
  const jobmgr::TaskRuntime& t = job->task(task.instance);
  if (t.state != TaskState::kPending && t.state != TaskState::kReady) return "";
  if (follower_) {
    return "this answer is a standby's copy of the store, which does not schedule: the leader "
           "says why the task waits";
  }
  if (job->spec().schedule) {
    if (std::string cron = cron_.Describe(task.job); !cron.empty()) return cron;
  }
  std::string why = WhyWaiting(*job, task);
  if (t.gang_attempt == 0 || !jobmgr::RestartsAsGang(job->spec())) return why;
  // A gang restarted together: its members wait for each other (their events say why).
  std::string restart = absl::StrCat("gang attempt ", t.gang_attempt, ", every member together");
  return why.empty() ? restart : absl::StrCat(restart, ": ", why);
}

std::string SchedulerCore::WhyWaiting(const jobmgr::Job& job, TaskId task) const {
  const jobmgr::TaskRuntime& t = job.task(task.instance);
  if (job.spec().type == JobType::kStateful && t.volume_host != jobmgr::kNoHost) {
    const hostmgr::TrackedHost* h = hosts_.Find(jobs_.HostName(t.volume_host));
    if (h != nullptr && (!h->connected || h->maintenance != records::HostMaintenance::kUp)) {
      return absl::StrCat("waiting for its volume on host ", h->spec.name, " (",
                          h->connected ? records::MaintenanceName(h->maintenance) : "LOST",
                          "); `paceline task release-volume ", task.ToString(),
                          "` starts it elsewhere with an empty volume");
    }
  }
  if (const std::string* w = why_.Find(task)) return *w;
  if (t.reason == jobmgr::TaskReason::kWaitingForDependencies) {
    return jobmgr::WhyHeld(job, [this](JobId id) { return jobs_.GetJob(id); });
  }
  if (std::optional<resmgr::GangId> gang = rm_.GangOf(task)) {
    absl::StatusOr<resmgr::GangView> view = rm_.DescribeGang(*gang);
    if (view.ok() && view->queued.has_value()) return view->queued->why;
    if (view.ok()) return "admitted; waiting for placement";
  }
  if (t.not_before > absl::InfinitePast()) {
    if (t.failures > 0) {
      return absl::StrCat("crash-looping (", t.failures, " failed runs); next try at ",
                          absl::FormatTime(absl::RFC3339_sec, t.not_before, absl::UTCTimeZone()));
    }
    return absl::StrCat("waiting for restart backoff until ",
                        absl::FormatTime(absl::RFC3339_sec, t.not_before, absl::UTCTimeZone()));
  }
  return "";
}

}  // namespace paceline::scheduler
