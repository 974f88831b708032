// The gang failure policy under random faults, with a fixed, printed seed: jobs whose gangs
// restart together (job.gang.restart: gang) run on simulated agents while members fail, fail to
// start, succeed, are preempted, lose their hosts, and the master restarts from its store. The
// checks are written apart from the policy's code, from what an observer of the cluster sees:
//   - a gang never stays partly running: once nothing is being stopped, a gang with a member
//     that failed, was lost or was killed has no member that is live;
//   - every member of a gang is in the same attempt, which only grows, by one at a time;
//   - a gang's failed runs (its members' `failures`) never exceed max_restarts while any member
//     is live, nor max_restarts + 1 (the failure that fails it) ever: preemption and lost hosts
//     restart it without using the budget;
//   - a gang is only ever enqueued whole (so the scheduler places it together), and a task never
//     has two runs alive at once;
//   - in the end every job either succeeded, or failed with a gang that used all its restarts
//     (max_restarts + 1 failed runs).

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "store/memory_store.h"

namespace paceline::jobmgr {
namespace {

constexpr uint64_t kSeed = 0x5eed'0039;
constexpr int kTrials = 150;
constexpr int kSteps = 300;
const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// The cluster around the job manager: agents that run what they are told, and a scheduler that
// admits and places whole enqueued groups, as scheduler/gangs.h groups them.
class World {
 public:
  World(std::mt19937_64& rng, int hosts) : rng_(rng), up_(hosts, true) {}

  void Create(JobSpec spec) {
    Effects fx;
    auto id = jm_->CreateJob(std::move(spec), "/pool", now_, fx);
    ASSERT_TRUE(id.ok());
    jobs_.push_back(*id);
    Apply(fx);
  }

  // One random step; `faults` false: only progress (placing, starting, stopping, succeeding).
  void Step(bool faults) {
    now_ += absl::Milliseconds(100);
    if (!faults) HostBack();
    int pick = std::uniform_int_distribution<int>(0, faults ? 99 : 89)(rng_);
    if (pick < 25) {
      Schedule();
    } else if (pick < 50) {
      StartOne();
    } else if (pick < 75) {
      AckOneKill();
    } else if (pick < 90) {
      EndOne(TaskState::kSucceeded);
    } else if (pick < 93) {
      EndOne(TaskState::kFailed);
    } else if (pick < 95) {
      PreemptOne();
    } else if (pick < 96) {
      LoseHost();
    } else if (pick < 98) {
      HostBack();
    } else {
      RestartMaster();
    }
    Check();
  }

  bool AllDone() const {
    for (JobId id : jobs_) {
      if (!IsTerminal(jm_->GetJob(id)->state())) return false;
    }
    return true;
  }
  const JobManager& jm() const { return *jm_; }
  const std::vector<JobId>& jobs() const { return jobs_; }
  int restarts_seen() const { return restarts_seen_; }

 private:
  struct Gang {
    uint32_t first = 0;
    uint32_t end = 0;
  };
  Gang GangOf(const Job& job, uint32_t i) const {
    uint32_t size = std::max<uint32_t>(1, job.spec().sla.min_running_instances);
    return Gang{i / size * size, std::min(i / size * size + size, job.instances())};
  }

  template <typename T>
  T& Any(std::vector<T>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)];
  }

  void Apply(Effects& fx) {
    ASSERT_TRUE(store_.Commit(fx.batch).ok());
    // The scheduler's grouping: consecutive instances of one job in one aligned multiple.
    for (size_t i = 0; i < fx.enqueue.size();) {
      const Job* job = jm_->GetJob(fx.enqueue[i].job);
      uint32_t size = std::max<uint32_t>(1, job->spec().sla.min_running_instances);
      size_t j = i + 1;
      while (j < fx.enqueue.size() && j - i < size && fx.enqueue[j].job == fx.enqueue[i].job &&
             fx.enqueue[j].instance == fx.enqueue[j - 1].instance + 1 &&
             fx.enqueue[j].instance / size == fx.enqueue[i].instance / size) {
        ++j;
      }
      std::vector<TaskId> group(fx.enqueue.begin() + i, fx.enqueue.begin() + j);
      Gang g = GangOf(*job, group[0].instance);
      EXPECT_EQ(group.size(), g.end - g.first)
          << "a gang enqueued in parts: " << group[0].ToString() << " + " << group.size() - 1;
      queue_.push_back(std::move(group));
      i = j;
    }
    for (const LaunchCommand& l : fx.launches) {
      for (const auto& [run, host] : procs_) {
        EXPECT_FALSE(run.task == l.run.task) << "two runs of " << l.run.task.ToString();
      }
      procs_[l.run] = l.placed.host;
    }
    for (const KillCommand& k : fx.kills) kills_.insert(k.run);
    fx = Effects();
  }

  std::vector<RunId> ProcsIn(std::initializer_list<TaskState> states) {
    std::vector<RunId> out;
    for (const auto& [run, host] : procs_) {
      const TaskRuntime& t = jm_->GetJob(run.task.job)->task(run.task.instance);
      if (t.run != run.run) continue;
      if (std::find(states.begin(), states.end(), t.state) != states.end()) out.push_back(run);
    }
    return out;
  }

  void Report(RunId run, TaskState state, int code, TaskReason reason = TaskReason::kNone) {
    Effects fx;
    jm_->OnStatus({run, procs_.at(run), state, code, 0, reason, ""}, now_, fx);
    if (state != TaskState::kRunning) procs_.erase(run);
    Apply(fx);
  }

  void Schedule() {
    if (queue_.empty()) return;
    size_t k = std::uniform_int_distribution<size_t>(0, queue_.size() - 1)(rng_);
    std::vector<TaskId> group = queue_[k];
    queue_.erase(queue_.begin() + k);
    std::vector<int> up;
    for (int h = 0; h < static_cast<int>(up_.size()); ++h) {
      if (up_[h]) up.push_back(h);
    }
    if (up.empty()) {
      queue_.push_back(group);
      return;
    }
    Effects fx;
    for (const TaskId& t : group) {
      if (jm_->GetJob(t.job)->task(t.instance).state != TaskState::kPending) continue;
      jm_->OnAdmitted(t, now_, fx);
      jm_->OnPlaced(t, {.host = "h" + std::to_string(Any(up))}, now_, fx);
    }
    Apply(fx);
  }

  void StartOne() {
    std::vector<RunId> launching = ProcsIn({TaskState::kLaunching});
    if (!launching.empty()) Report(Any(launching), TaskState::kRunning, -1);
  }

  void EndOne(TaskState how) {
    std::vector<RunId> live = ProcsIn({TaskState::kLaunching, TaskState::kRunning});
    if (live.empty()) return;
    RunId run = Any(live);
    const bool starting =
        jm_->GetJob(run.task.job)->task(run.task.instance).state == TaskState::kLaunching;
    if (how == TaskState::kSucceeded) {
      if (!starting) Report(run, TaskState::kSucceeded, 0);
    } else if (starting) {
      Report(run, TaskState::kFailed, -1, TaskReason::kLaunchFailed);
    } else {
      Report(run, TaskState::kFailed, std::uniform_int_distribution<int>(1, 137)(rng_));
    }
  }

  void AckOneKill() {
    if (kills_.empty()) return;
    auto it = kills_.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, kills_.size() - 1)(rng_));
    RunId run = *it;
    kills_.erase(it);
    if (procs_.contains(run)) Report(run, TaskState::kKilled, -1);
  }

  void PreemptOne() {
    std::vector<RunId> running = ProcsIn({TaskState::kRunning});
    if (running.empty()) return;
    Effects fx;
    jm_->instances().Preempt(Any(running).task, "a higher-priority job", now_, fx);
    Apply(fx);
  }

  void LoseHost() {
    int h = std::uniform_int_distribution<int>(0, static_cast<int>(up_.size()) - 1)(rng_);
    if (!up_[h]) return;
    up_[h] = false;
    const std::string name = "h" + std::to_string(h);
    for (auto it = procs_.begin(); it != procs_.end();) {
      it = it->second == name ? procs_.erase(it) : std::next(it);  // its processes are gone
    }
    Effects fx;
    jm_->OnHostLost(name, now_, fx);
    Apply(fx);
  }

  void HostBack() {
    for (size_t h = 0; h < up_.size(); ++h) up_[h] = true;
  }

  // kill -9 of the master: a new one rebuilt from the store; the agents keep their processes
  // and report them again (a run being stopped gets its kill again).
  void RestartMaster() {
    auto contents = store_.Load();
    ASSERT_TRUE(contents.ok());
    jm_ = std::make_unique<JobManager>();
    Effects fx;
    ASSERT_TRUE(jm_->Restore(*contents, now_, fx).ok());
    queue_.clear();
    kills_.clear();
    Apply(fx);
    std::vector<RunId> runs;
    for (const auto& [run, host] : procs_) runs.push_back(run);
    for (const RunId& run : runs) {
      Effects again;
      jm_->OnStatus({run, procs_.at(run), TaskState::kRunning}, now_, again);
      Apply(again);
    }
  }

  void Check() {
    for (JobId id : jobs_) {
      const Job& job = *jm_->GetJob(id);
      const uint32_t budget = job.spec().gang.max_restarts;
      for (uint32_t first = 0; first < job.instances();) {
        Gang g = GangOf(job, first);
        bool stopping = false, live = false, broken = false;
        uint32_t failed_runs = 0;
        const uint32_t attempt = job.task(first).gang_attempt;
        for (uint32_t m = g.first; m < g.end; ++m) {
          const TaskRuntime& t = job.task(m);
          EXPECT_EQ(t.gang_attempt, attempt) << "members in different attempts: " << m;
          stopping |= t.state == TaskState::kKilling || t.state == TaskState::kPreempting;
          live |= !IsTerminal(t.state) && t.state != TaskState::kKilling;
          broken |= t.state == TaskState::kFailed || t.state == TaskState::kLost ||
                    t.state == TaskState::kKilled;
          failed_runs += t.failures;
        }
        EXPECT_LE(failed_runs, budget + 1);
        if (failed_runs > budget) {
          EXPECT_FALSE(live) << "job " << id.value() << " gang at " << g.first
                             << " runs on with its restarts spent";
        }
        uint32_t& seen = attempts_[{id, g.first}];
        EXPECT_TRUE(attempt == seen || attempt == seen + 1) << seen << " -> " << attempt;
        if (attempt > seen) ++restarts_seen_;
        seen = attempt;
        if (!stopping) {
          EXPECT_FALSE(live && broken) << "job " << id.value() << " gang at " << g.first
                                       << " partly running after it settled";
        }
        first = g.end;
      }
    }
  }

  std::mt19937_64& rng_;
  std::unique_ptr<JobManager> jm_ = std::make_unique<JobManager>();
  store::MemoryStore store_;
  absl::Time now_ = kT0;
  std::vector<JobId> jobs_;
  std::vector<bool> up_;
  std::vector<std::vector<TaskId>> queue_;  // enqueued groups, not placed yet
  std::map<RunId, std::string> procs_;      // the runs the agents have, and where
  std::set<RunId> kills_;                   // kills sent and not yet carried out
  std::map<std::pair<JobId, uint32_t>, uint32_t> attempts_;
  int restarts_seen_ = 0;
};

TEST(GangRestartsProperty, GangsNeverStayPartlyRunningAndNeverExceedTheirRestarts) {
  SCOPED_TRACE(::testing::Message() << "seed=" << kSeed);
  std::mt19937_64 rng(kSeed);
  int restarts = 0, failed_jobs = 0, succeeded_jobs = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    World w(rng, 4);
    for (int j = 0; j < 2; ++j) {
      JobSpec s;
      s.name = "train";
      s.task.command = "train";
      s.task.resources = Resources::Of(100, int64_t{64} << 20);
      uint32_t size = std::uniform_int_distribution<uint32_t>(2, 4)(rng);
      s.instances = size * std::uniform_int_distribution<uint32_t>(1, 2)(rng) +
                    std::uniform_int_distribution<uint32_t>(0, 1)(rng);  // a last, smaller gang
      s.sla.min_running_instances = size;
      s.gang.restart = GangRestart::kGang;
      s.gang.max_restarts = std::uniform_int_distribution<uint32_t>(0, 4)(rng);
      w.Create(s);
    }
    for (int step = 0; step < kSteps && !::testing::Test::HasFailure(); ++step) w.Step(true);
    for (int step = 0; step < 20'000 && !w.AllDone() && !::testing::Test::HasFailure(); ++step) {
      w.Step(false);
    }
    ASSERT_TRUE(w.AllDone()) << "jobs still running after the faults stopped";
    restarts += w.restarts_seen();
    for (JobId id : w.jobs()) {
      const Job& job = *w.jm().GetJob(id);
      if (job.state() == JobState::kSucceeded) {
        ++succeeded_jobs;
        continue;
      }
      ASSERT_EQ(job.state(), JobState::kFailed);
      ++failed_jobs;
      bool spent = false;
      const uint32_t size = job.spec().sla.min_running_instances;
      for (uint32_t first = 0; first < job.instances(); first += size) {
        uint32_t failed_runs = 0;
        for (uint32_t m = first; m < std::min(first + size, job.instances()); ++m) {
          failed_runs += job.task(m).failures;
        }
        spent |= failed_runs == job.spec().gang.max_restarts + 1;
      }
      EXPECT_TRUE(spent) << "job " << id.value() << " failed with restarts left";
    }
  }
  // The faults did what they were for: gangs restarted, and some ran out of restarts.
  EXPECT_GT(restarts, kTrials);
  EXPECT_GT(failed_jobs, 0);
  EXPECT_GT(succeeded_jobs, 0);
  std::printf("seed %llu: %d gang restarts, %d jobs succeeded, %d failed\n",
              static_cast<unsigned long long>(kSeed), restarts, succeeded_jobs, failed_jobs);
}

}  // namespace
}  // namespace paceline::jobmgr
