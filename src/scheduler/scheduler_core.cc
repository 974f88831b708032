#include "scheduler/scheduler_core.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "common/units.h"
#include "hostmgr/maintenance.h"
#include "placement/plan.h"

namespace paceline::scheduler {

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
  for (const records::HostRecord& h : contents.hosts) {
    placement::HostSpec spec;
    spec.name = h.name;
    spec.capacity = h.capacity;
    for (const auto& [k, v] : h.labels) spec.labels.emplace_back(k, v);
    // Known but not connected: it must register again; its tasks wait for it until the
    // host timeout, counted from now.
    HostId id = hosts_.Restore(spec, now);
    hosts_.SetMaintenance(id, h.maintenance);
    draining_hosts_ += h.maintenance == records::HostMaintenance::kDraining;
  }
  jobmgr::Effects fx;
  RETURN_IF_ERROR(jobs_.Restore(contents, now, fx, more));
  size_t adoptable = 0;  // tasks whose agents will report them as they register again
  jobs_.ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    if (job.spec().type == JobType::kDaemon) daemons_.Add(job.id());
    retention_.Restore(job);
    for (int s = 0; s < kNumTaskStates; ++s) {
      if (MayHaveProcess(TaskState(s))) adoptable += job.count(TaskState(s));
    }
    return true;
  });
  // Adopting them then grows nothing: no rehash of millions of entries while the fleet returns.
  rm_.Reserve(adoptable);
  snapshot_.ReserveTasks(adoptable);
  Absorb(fx, now, out);
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
// Hosts: liveness, maintenance, daemons (the rules are hostmgr's)

void SchedulerCore::ExpireHosts(absl::Time now, Actions& out) {
  for (HostId id : hosts_.Expire(now)) {
    daemons_.MarkDirty();
    const std::string& name = hosts_.Get(id).spec.name;
    (void)snapshot_.FailHost(id, placement::HostStatus::kLost);
    usage_.ForgetHost(name);
    jobmgr::Effects fx;
    jobs_.OnHostLost(name, now, fx);
    Absorb(fx, now, out);
  }
}

void SchedulerCore::ApplyMaintenance(HostId id, records::HostMaintenance m, Actions& out) {
  draining_hosts_ -= hosts_.Get(id).maintenance == records::HostMaintenance::kDraining;
  draining_hosts_ += m == records::HostMaintenance::kDraining;
  hosts_.SetMaintenance(id, m);
  const hostmgr::TrackedHost& h = hosts_.Get(id);
  if (h.connected) (void)snapshot_.SetHostStatus(id, hostmgr::StatusOf(m));
  out.batch.put_hosts.push_back(hostmgr::RecordOf(h));
}

void SchedulerCore::DrainHosts(absl::Time now, Actions& out) {
  for (const hostmgr::TrackedHost& h : hosts_.all()) {
    if (h.maintenance != records::HostMaintenance::kDraining) continue;
    jobmgr::Effects fx;
    if (hostmgr::DrainStep(h, jobs_, now, fx)) {
      ApplyMaintenance(h.id, records::HostMaintenance::kDrained, out);
    }
    Absorb(fx, now, out);
  }
}

void SchedulerCore::ReconcileDaemons(absl::Time now, Actions& out) {
  jobmgr::Effects fx;
  daemons_.Reconcile(hosts_, jobs_, now, fx);
  Absorb(fx, now, out);
}

// ---------------------------------------------------------------------------------------------
// The cycle

void SchedulerCore::RunCycle(absl::Time now, Actions& out) {
  {
    jobmgr::Effects fx;
    jobs_.Tick(now, fx);
    Absorb(fx, now, out);
  }
  ExpireHosts(now, out);
  if (draining_hosts_ > 0) DrainHosts(now, out);
  if (!daemons_.empty()) ReconcileDaemons(now, out);

  resmgr::CycleResult cycle =
      rm_.RunCycle({hosts_.connected_capacity(), usage_.AllocatedUnused(now)}, now);
  for (const resmgr::PreemptionDecision& p : cycle.preempted) {
    const std::string& why = p.reason;
    jobmgr::Effects fx;
    for (const TaskId& t : p.tasks) jobs_.instances().Preempt(t, why, now, fx);
    Absorb(fx, now, out);
  }
  for (const resmgr::AdmittedGang& a : cycle.admitted) {
    std::optional<resmgr::GangMembers> g = rm_.Members(a.gang);
    if (!g.has_value()) continue;
    jobmgr::Effects fx;
    for (const TaskId& t : g->tasks) jobs_.OnAdmitted(t, now, fx);
    Absorb(fx, now, out);
    to_place_.push_back(a.gang.value());
  }
  SyncSlack(now, out);
  PlaceAdmitted(now, out);
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
  c.capacity = hosts_.connected_capacity();
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
  requests.reserve(to_place_.size());
  for (uint64_t gid : to_place_) {
    std::optional<resmgr::GangMembers> g = rm_.Members(resmgr::GangId(gid));
    if (!g.has_value()) continue;
    const jobmgr::Job* job = jobs_.GetJob(g->job);
    if (job == nullptr) continue;
    placement::PlacementRequest req;
    bool ok = true;
    for (const TaskId& t : g->tasks) {
      if (job->task(t.instance).state != TaskState::kReady) continue;
      absl::StatusOr<std::shared_ptr<const placement::TaskShape>> shape = ShapeOf(*job, t.instance);
      if (!shape.ok()) {
        why_[t] = std::string(shape.status().message());
        ok = false;
        break;
      }
      std::optional<HostId> pin;
      if (job->spec().type == JobType::kDaemon) pin = daemons_.HostOf(t, jobs_, hosts_);
      if (job->spec().type == JobType::kStateful) pin = VolumeHostOf(*job, t.instance);
      req.tasks.push_back(placement::PlacementTask{t, *shape, InPlaceHost(*job, t.instance), pin});
    }
    if (!ok || req.tasks.empty()) continue;
    requests.push_back(std::move(req));
    request_gang.push_back(gid);
  }
  placement::Plan plan = engine_->Place(requests, snapshot_);
  placement::ApplyResult applied = placement::ApplyPlan(plan, snapshot_);
  absl::flat_hash_map<uint32_t, bool> rejected;
  for (const auto& r : applied.rejected) rejected[r.request_index] = true;

  jobmgr::Effects fx;
  std::vector<HostId> regular_hosts;  // hosts that got regular work: revocable work may go
  for (const placement::Assignment& a : plan.assignments) {
    if (rejected.contains(a.request_index)) continue;
    if (!a.shape->revocable) regular_hosts.push_back(a.host);
    why_.erase(a.task);
    ++placements_;
    jobmgr::Placement placed{.host = hosts_.Get(a.host).spec.name};
    for (size_t i = 0; i < a.ports.size() && i < a.shape->port_names.size(); ++i) {
      placed.ports.emplace_back(a.shape->port_names[i], a.ports[i]);
    }
    for (const auto& share : a.gpus) placed.gpu_devices.push_back(share.device);
    jobs_.OnPlaced(a.task, std::move(placed), now, fx);
  }
  absl::flat_hash_map<uint64_t, bool> still_waiting;
  for (const placement::PendingRequest& p : plan.pending) {
    std::string line = p.explanation.OneLine();
    for (const TaskId& t : p.tasks) why_[t] = line;
    still_waiting[request_gang[p.request_index]] = true;
  }
  for (const auto& r : applied.rejected) {
    still_waiting[request_gang[r.request_index]] = true;
    why_[r.task] = absl::StrCat("placement raced: ", r.status.message());
  }
  std::vector<uint64_t> next;
  for (uint64_t gid : to_place_) {
    if (still_waiting.contains(gid)) next.push_back(gid);
  }
  to_place_ = std::move(next);
  Absorb(fx, now, out);
  std::sort(regular_hosts.begin(), regular_hosts.end());
  regular_hosts.erase(std::unique(regular_hosts.begin(), regular_hosts.end()), regular_hosts.end());
  for (HostId h : regular_hosts) ReclaimRevocable(h, ReclaimCause::kRegularWork, now, out);
}

// ---------------------------------------------------------------------------------------------
// Effects of the job manager

void SchedulerCore::Absorb(jobmgr::Effects& fx, absl::Time now, Actions& out) {
  for (const TaskId& t : fx.release) ReleaseTask(t);
  for (const TaskId& t : fx.withdraw) {
    std::optional<resmgr::GangId> gid = rm_.GangOf(t);
    if (!gid.has_value()) continue;
    std::optional<resmgr::GangMembers> g = rm_.Members(*gid);
    if (g.has_value() && g->state == resmgr::GangState::kQueued) {
      (void)rm_.Cancel(*gid);
    } else {
      ReleaseTask(t);
    }
  }
  if (!fx.enqueue.empty()) EnqueueGangs(fx.enqueue, now);

  PeerCache peers;
  PlacedNow placed;
  for (const jobmgr::LaunchCommand& l : fx.launches) placed[l.run.task] = &l.placed;
  for (const jobmgr::LaunchCommand& l : fx.launches) {
    const jobmgr::Job* job = jobs_.GetJob(l.run.task.job);
    if (job == nullptr) continue;
    Launch launch;
    launch.run = l.run;
    launch.host = l.placed.host;
    launch.pool = job->pool();
    launch.ports = l.placed.ports;
    launch.gpu_devices = l.placed.gpu_devices;
    launch.task = job->TaskFor(l.run.task.instance);
    launch.spec_version = job->task(l.run.task.instance).spec_version;
    launch.gang_size = std::max<uint32_t>(1, job->spec().sla.min_running_instances);
    if (launch.gang_size > 1) launch.peers = PeersOf(l.run.task, launch.gang_size, placed, peers);
    out.launches.push_back(std::move(launch));
  }
  auto move_all = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  NoteFinished(fx, now);
  move_all(out.kills, fx.kills);
  move_all(out.batch.put_jobs, fx.batch.put_jobs);
  move_all(out.batch.put_tasks, fx.batch.put_tasks);
  move_all(out.batch.delete_tasks, fx.batch.delete_tasks);
  move_all(out.batch.events, fx.batch.events);
  for (JobId id : fx.batch.delete_jobs) retention_.Forget(id);
  move_all(out.batch.delete_jobs, fx.batch.delete_jobs);
  if (fx.batch.next_job_id) out.batch.next_job_id = fx.batch.next_job_id;
  fx = jobmgr::Effects();
}

void SchedulerCore::NoteFinished(const jobmgr::Effects& fx, absl::Time now) {
  JobId last(0);  // events come in runs of one job: skip the repeats
  auto note = [&](JobId id) {
    if (id == last) return;
    last = id;
    if (const jobmgr::Job* job = jobs_.GetJob(id)) retention_.Update(*job, now);
  };
  for (const records::JobRecord& j : fx.batch.put_jobs) note(j.id);
  for (const records::TaskEvent& e : fx.batch.events) note(e.run.task.job);
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

std::shared_ptr<const std::vector<GangPeer>> SchedulerCore::PeersOf(TaskId task, uint32_t gang_size,
                                                                    const PlacedNow& placed,
                                                                    PeerCache& cache) const {
  const jobmgr::Job* job = jobs_.GetJob(task.job);
  if (job == nullptr || gang_size < 2) return nullptr;
  const uint32_t first = task.instance / gang_size * gang_size;
  const uint32_t end = std::min(first + gang_size, job->instances());
  if (end - first < 2) return nullptr;  // a last gang of one
  auto [it, missing] = cache.try_emplace(std::make_pair(task.job, first));
  if (!missing) return it->second;
  auto list = std::make_shared<std::vector<GangPeer>>();
  for (uint32_t i = first; i < end; ++i) {
    const TaskId member{task.job, i};
    GangPeer p;
    p.instance = i;
    if (auto a = placed.find(member); a != placed.end()) {
      p.host = a->second->host;
      p.ports = a->second->ports;
    } else {
      // Not placed now: a member whose run is live where the job manager records it, with the
      // ports it holds there. Members without a live run (waiting, being stopped) are left out.
      const jobmgr::TaskRuntime& t = job->task(i);
      if ((t.state != TaskState::kLaunching && t.state != TaskState::kRunning) ||
          t.host == jobmgr::kNoHost) {
        continue;
      }
      p.host = jobs_.HostName(t.host);
      if (const placement::Usage* u = snapshot_.TaskUsage(member)) {
        const std::vector<std::string> names = job->TaskFor(i)->ports;
        for (size_t k = 0; k < u->ports().size() && k < names.size(); ++k) {
          p.ports.emplace_back(names[k], u->ports()[k]);
        }
      }
    }
    list->push_back(std::move(p));
  }
  it->second = std::move(list);
  return it->second;
}

void SchedulerCore::EnqueueGangs(const std::vector<TaskId>& tasks, absl::Time now) {
  size_t i = 0;
  while (i < tasks.size()) {
    const jobmgr::Job* job = jobs_.GetJob(tasks[i].job);
    if (job == nullptr) {
      ++i;
      continue;
    }
    const JobSpec& spec = job->spec();
    uint32_t size = std::max<uint32_t>(1, spec.sla.min_running_instances);
    // A gang: up to `size` consecutive instances of the same job, within one multiple of
    // `size` (instances 0..size-1, size..2*size-1, ...), so that a gang is always the same
    // instances, whichever of them are enqueued together.
    size_t j = i + 1;
    while (j < tasks.size() && j - i < size && tasks[j].job == tasks[i].job &&
           tasks[j].instance == tasks[j - 1].instance + 1 &&
           tasks[j].instance / size == tasks[i].instance / size) {
      ++j;
    }
    absl::Span<const TaskId> members(&tasks[i], j - i);
    absl::Status s = rm_.Enqueue(GangRequestOf(*job, members, next_gang_++), now);
    if (!s.ok()) {
      for (const TaskId& t : members) why_[t] = std::string(s.message());
    }
    i = j;
  }
}

resmgr::GangRequest SchedulerCore::GangRequestOf(const jobmgr::Job& job,
                                                 absl::Span<const TaskId> tasks,
                                                 uint64_t gid) const {
  const JobSpec& spec = job.spec();
  resmgr::GangRequest req;
  req.id = resmgr::GangId(gid);
  req.job = job.id();
  req.pool = *rm_.tree().Find(job.pool());
  req.priority = spec.priority;
  req.sla = resmgr::SlaClassOf(spec.sla);
  req.max_running_instances = spec.sla.max_running_instances;
  for (const TaskId& t : tasks) {
    const std::shared_ptr<const TaskSpec> task = job.TaskFor(t.instance);
    req.controller = req.controller || task->controller;
    req.tasks.push_back({t, task->resources});
  }
  return req;
}

void SchedulerCore::ReleaseTask(TaskId task) {
  (void)snapshot_.Release(task);
  usage_.Forget(task);
  (void)rm_.Release(task);  // NOT_FOUND: it held nothing
}

absl::StatusOr<std::shared_ptr<const placement::TaskShape>> SchedulerCore::ShapeOf(
    const jobmgr::Job& job, uint32_t instance) {
  uint32_t version = job.task(instance).spec_version;
  const JobSpec* spec = job.SpecOf(version);
  if (spec == nullptr) spec = &job.spec();
  bool overridden = spec->instance_overrides.contains(instance);
  std::pair<JobId, uint32_t> key{job.id(), version};
  if (!overridden) {
    auto it = shapes_.find(key);
    if (it != shapes_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const placement::TaskShape> shape,
                   placement::TaskShapeFromSpec(job.id(), *spec, instance));
  if (!overridden) shapes_[key] = shape;
  return shape;
}

std::string SchedulerCore::WhyPending(TaskId task) const {
  const jobmgr::Job* job = jobs_.GetJob(task.job);
  if (job == nullptr || task.instance >= job->instances()) return "";
  const jobmgr::TaskRuntime& t = job->task(task.instance);
  if (t.state != TaskState::kPending && t.state != TaskState::kReady) return "";
  if (job->spec().type == JobType::kStateful && t.volume_host != jobmgr::kNoHost) {
    const hostmgr::TrackedHost* h = hosts_.Find(jobs_.HostName(t.volume_host));
    if (h != nullptr && (!h->connected || h->maintenance != records::HostMaintenance::kUp)) {
      return absl::StrCat("waiting for its volume on host ", h->spec.name, " (",
                          h->connected ? records::MaintenanceName(h->maintenance) : "LOST",
                          "); `paceline task release-volume ", task.ToString(),
                          "` starts it elsewhere with an empty volume");
    }
  }
  auto w = why_.find(task);
  if (w != why_.end()) return w->second;
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
