// The simulation loop (see sim_driver.h).

#include "sim/sim_driver.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "scheduler/scheduler_core.h"

namespace paceline::sim {
namespace {

using scheduler::Actions;
using scheduler::SchedulerCore;

constexpr absl::Duration kStallAfter = absl::Minutes(10);

// A report a simulated agent will send: RUNNING after start_delay, SUCCEEDED after duration.
struct RunEvent {
  absl::Duration at;
  uint64_t seq = 0;
  uint64_t job = 0;
  uint32_t instance = 0;
  uint32_t run = 0;
  bool finish = false;  // false: RUNNING; true: SUCCEEDED (KILLED with `killed`)
  bool killed = false;  // the SIGTERM of a kill that waited its deregistration delay
  friend bool operator>(const RunEvent& a, const RunEvent& b) {
    return std::tie(a.at, a.seq) > std::tie(b.at, b.seq);
  }
};

// What the simulated agents hold for one job, by instance.
struct JobTrack {
  bool present = false;
  size_t outcome = 0;  // index in SimResult::jobs
  absl::Duration duration;
  std::vector<uint32_t> live_run;  // run the agent has (0 = none)
  std::vector<uint32_t> host;      // its host index
  std::vector<bool> started;       // reached RUNNING once
};

class Simulator {
 public:
  explicit Simulator(const Scenario& sc) : sc_(sc) {}

  absl::StatusOr<SimResult> Run() {
    auto wall_start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    RETURN_IF_ERROR(Setup());
    const absl::Duration end = sc_.run_for;
    absl::Duration next_cycle = absl::ZeroDuration();
    absl::Duration next_hb = sc_.heartbeat_every;
    absl::Duration next_report = sc_.report_every;
    absl::Duration last_progress = absl::ZeroDuration();
    size_t next_job = 0;
    absl::Duration t = absl::ZeroDuration();
    while (true) {
      DrainReports(t);
      while (next_job < sc_.jobs.size() && sc_.jobs[next_job].at <= t) Submit(next_job++, t);
      if (t == next_hb) {
        for (const std::string& h : host_names_) core_->agents().Heartbeat(h, Now(t));
        next_hb += sc_.heartbeat_every;
      }
      if (t == next_cycle) {
        uint64_t before = core_->placements();
        Actions out;
        core_->RunCycle(Now(t), out);
        ++result_.cycles;
        if (core_->placements() != before || !out.kills.empty()) last_progress = t;
        Apply(out, t);
        DrainReports(t);
        next_cycle += sc_.cycle_every;
      }
      bool done = false;
      if (end == absl::InfiniteDuration()) {
        done = next_job == sc_.jobs.size() && unfinished_ == 0;
        if (!done && next_job == sc_.jobs.size() && live_ == 0 &&
            t - last_progress >= kStallAfter) {
          result_.stalled = true;
          done = true;
        }
      } else {
        done = t >= end;
      }
      if (t == next_report || done) {
        Sample(t);
        next_report = t == next_report ? next_report + sc_.report_every : next_report;
      }
      if (done) break;
      // The next instant something happens.
      absl::Duration next = std::min({next_cycle, next_hb, next_report, end});
      if (!events_.empty()) next = std::min(next, events_.top().at);
      if (next_job < sc_.jobs.size()) next = std::min(next, sc_.jobs[next_job].at);
      t = next;
    }
    result_.end = t;
    result_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    result_.cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    return std::move(result_);
  }

 private:
  static absl::Time Now(absl::Duration t) { return absl::UnixEpoch() + t; }

  JobTrack* Track(JobId id) {
    return id.value() < jobs_.size() && jobs_[id.value()].present ? &jobs_[id.value()] : nullptr;
  }

  absl::Status Setup() {
    scheduler::CoreConfig config;
    config.placement.profile = sc_.placement;
    config.placement.seed = sc_.seed;
    config.resmgr.backfill = sc_.backfill;
    config.host_timeout = 3 * sc_.heartbeat_every;
    absl::StatusOr<std::unique_ptr<SchedulerCore>> core = SchedulerCore::Create(config);
    if (!core.ok()) return WithContext(core.status(), "placement");
    core_ = std::move(*core);
    Actions out;
    for (const auto& [path, spec] : sc_.pools) {
      absl::Status s = path == "/"
                           ? core_->pools().UpdatePool("/", spec, /*force=*/false, out).status()
                           : core_->pools().CreatePool(path, spec, out);
      if (!s.ok()) return WithContext(s, absl::StrCat("pools.", path));
    }
    for (const HostGroup& g : sc_.hosts) {
      for (uint32_t i = 0; i < g.count; ++i) {
        scheduler::HostRegistration reg;
        reg.name = g.exact_name ? g.name : absl::StrCat(g.name, "-", i);
        reg.capacity = g.resources;
        reg.gpu_models.assign(static_cast<size_t>(g.resources[Dim::kGpu] / kMilliPerUnit),
                              g.gpu_model);
        reg.labels = g.labels;
        RETURN_IF_ERROR(core_->agents().RegisterHost(reg, {}, Now(absl::ZeroDuration()), out));
        host_index_[reg.name] = static_cast<uint32_t>(host_names_.size());
        host_names_.push_back(reg.name);
        result_.capacity += g.resources;
      }
    }
    result_.hosts = host_names_.size();
    Apply(out, absl::ZeroDuration());
    for (const auto& [path, spec] : sc_.pools) {
      pool_ids_.emplace(path, core_->resources().tree().Lookup(path)->value());
    }
    if (!pool_ids_.contains("/"))
      pool_ids_.emplace("/", core_->resources().tree().Lookup("/")->value());
    return absl::OkStatus();
  }

  void Submit(size_t index, absl::Duration t) {
    const ScenarioJob& j = sc_.jobs[index];
    JobOutcome o;
    o.name = j.spec.name;
    o.pool = j.pool;
    o.instances = j.spec.instances;
    o.submitted = t;
    Actions out;
    absl::StatusOr<JobId> id = core_->job_control().CreateJob(j.spec, j.pool, Now(t), out);
    if (!id.ok()) {
      o.refused = std::string(id.status().message());
      result_.jobs.push_back(std::move(o));
      return;
    }
    o.id = id->value();
    const jobmgr::Job* job = core_->jobs().GetJob(*id);
    PL_CHECK(job != nullptr);
    if (jobs_.size() <= o.id) jobs_.resize(o.id + 1);
    JobTrack& track = jobs_[o.id];
    track.present = true;
    track.outcome = result_.jobs.size();
    track.duration = j.spec.task.duration;
    track.live_run.assign(job->instances(), 0);
    track.host.assign(job->instances(), 0);
    track.started.assign(job->instances(), false);
    result_.jobs.push_back(std::move(o));
    ++unfinished_;
    Apply(out, t);
    DrainReports(t);
  }

  // What the master does with Actions once the batch is durable: launches and kills go to the
  // agents (here: simulated ones).
  void Apply(Actions& out, absl::Duration t) {
    const records::WriteBatch& b = out.batch;
    result_.store_writes +=
        b.put_tasks.size() + b.put_jobs.size() + b.put_pools.size() + b.put_hosts.size();
    for (const scheduler::Launch& l : out.launches) {
      JobTrack* found = Track(l.run.task.job);
      if (found == nullptr) continue;
      JobTrack& track = *found;
      uint32_t inst = l.run.task.instance;
      if (track.live_run[inst] == 0) ++live_;
      track.live_run[inst] = l.run.run;
      track.host[inst] = host_index_.at(l.host);
      events_.push(
          RunEvent{t + sc_.start_delay, seq_++, l.run.task.job.value(), inst, l.run.run, false});
    }
    for (const jobmgr::KillCommand& k : out.kills) {
      if (k.reason == jobmgr::TaskReason::kPreempted || k.reason == jobmgr::TaskReason::kRevoked) {
        ++result_.preemptions, ++preemptions_;
      }
      JobTrack* found = Track(k.run.task.job);
      if (found == nullptr) continue;
      JobTrack& track = *found;
      uint32_t inst = k.run.task.instance;
      if (track.live_run[inst] != k.run.run) continue;  // ended already
      if (k.deregistration_delay > absl::ZeroDuration()) {
        // The agent waits the delay before SIGTERM (the run has left its endpoints).
        events_.push(RunEvent{t + k.deregistration_delay, seq_++, k.run.task.job.value(), inst,
                              k.run.run, true, true});
        continue;
      }
      track.live_run[inst] = 0;
      --live_;
      // The simulated process stops at once on SIGTERM.
      pending_.push_back({k.run, k.host, TaskState::kKilled, -1, 15, jobmgr::TaskReason::kNone,
                          "simulated task stopped"});
    }
  }

  // Sends the simulated agents' reports due at t (and those they cause at t).
  void DrainReports(absl::Duration t) {
    while (true) {
      if (!pending_.empty()) {
        std::vector<jobmgr::StatusReport> batch;
        batch.swap(pending_);
        for (const jobmgr::StatusReport& r : batch) Report(r, t);
        continue;
      }
      if (events_.empty() || events_.top().at > t) break;
      RunEvent e = events_.top();
      events_.pop();
      JobTrack& track = jobs_[e.job];
      if (track.live_run[e.instance] != e.run) continue;  // killed meanwhile
      RunId run{TaskId{JobId(e.job), e.instance}, e.run};
      const std::string& host = host_names_[track.host[e.instance]];
      if (!e.finish) {
        if (!track.started[e.instance]) {
          track.started[e.instance] = true;
          JobOutcome& o = result_.jobs[track.outcome];
          o.latencies.push_back(t - o.submitted);
        }
        if (track.duration > absl::ZeroDuration()) {
          events_.push(RunEvent{t + track.duration, seq_++, e.job, e.instance, e.run, true});
        }
        Report({run, host, TaskState::kRunning}, t);
      } else {
        track.live_run[e.instance] = 0;
        --live_;
        if (e.killed) {
          Report({run, host, TaskState::kKilled, -1, 15, jobmgr::TaskReason::kNone,
                  "simulated task stopped"},
                 t);
        } else {
          Report({run, host, TaskState::kSucceeded, 0, 0, jobmgr::TaskReason::kNone, ""}, t);
        }
      }
    }
  }

  void Report(const jobmgr::StatusReport& r, absl::Duration t) {
    Actions out;
    core_->agents().Heartbeat(r.host, Now(t));
    core_->agents().OnStatus(r, Now(t), out);
    Apply(out, t);
    if (IsTerminal(r.state)) {
      const jobmgr::Job* job = core_->jobs().GetJob(r.run.task.job);
      JobOutcome& o = result_.jobs[Track(r.run.task.job)->outcome];
      if (job != nullptr && job->live() == 0 && !o.finished) {
        o.finished = t;
        --unfinished_;
      }
    }
  }

  void Sample(absl::Duration t) {
    IntervalSample s;
    s.t = t;
    std::vector<resmgr::PoolStats> stats = core_->resources().AllStats();
    for (const auto& [path, id] : pool_ids_) {
      const resmgr::PoolStats& p = stats[id];
      s.pools[path] = PoolSample{p.reservation, p.limit, p.entitlement, p.allocation, p.demand};
    }
    for (uint64_t id = 0; id < jobs_.size(); ++id) {
      if (!jobs_[id].present) continue;
      const jobmgr::Job* job = core_->jobs().GetJob(JobId(id));
      if (job == nullptr) continue;
      for (int st = 0; st < kNumTaskStates; ++st) s.tasks[st] += job->count(TaskState(st));
    }
    uint64_t placed = core_->placements();
    s.placements = placed - placements_at_sample_;
    placements_at_sample_ = placed;
    s.preemptions = preemptions_;
    preemptions_ = 0;
    s.jobs_arrived = result_.jobs.size();
    // What the hosts hold (placed tasks), not what the resource manager admitted: admitted
    // gangs may wait for preemption to free their room.
    const placement::ClusterSnapshot& snap = core_->snapshot();
    for (uint32_t slot = 0; slot < snap.slots(); ++slot) {
      if (snap.present(slot)) s.allocated += snap.host_at(slot).allocated();
    }
    result_.placements = placed;
    result_.intervals.push_back(std::move(s));
  }

  const Scenario& sc_;
  std::unique_ptr<SchedulerCore> core_;
  SimResult result_;
  std::vector<std::string> host_names_;
  absl::flat_hash_map<std::string, uint32_t> host_index_;
  std::map<std::string, uint32_t> pool_ids_;  // path -> PoolId value
  std::vector<JobTrack> jobs_;                // by JobId value (the core numbers jobs 1, 2, ...)
  std::priority_queue<RunEvent, std::vector<RunEvent>, std::greater<RunEvent>> events_;
  std::vector<jobmgr::StatusReport> pending_;  // reports due now (kills)
  uint64_t seq_ = 0;
  uint64_t live_ = 0;        // runs the simulated agents hold
  uint64_t unfinished_ = 0;  // jobs with live instances
  uint64_t placements_at_sample_ = 0;
  uint64_t preemptions_ = 0;  // since the last sample
};

}  // namespace

absl::StatusOr<SimResult> RunScenario(const Scenario& scenario) {
  Simulator sim(scenario);
  return sim.Run();
}

}  // namespace paceline::sim
