#pragma once
// TaskCredentials: the master's side of task credentials (access/task_credential.h,
// docs/security.md "Task credentials") — mints one into the launch of every run with an
// identity (task.identity, or a controller), renews them over the agents' streams before they
// expire, and answers whether a run still lives (the check behind every use of one).
//
//   launch      FillLaunch puts a token for the run, valid `ttl`, into its LaunchTask.
//   renewal     a thread of its own, every ttl/3: one read on the loop goes over the index of
//               runs with an identity (O(those runs), never every task of the cluster); each
//               still live gets a new token, sent to its host's agent
//               (MasterMessage.renew_credential), which replaces the file. A run whose token is
//               not renewed (its host is not connected) keeps the old one until it expires. Only
//               a master that serves renews.
//   the index   a run enters it when its launch leaves with a credential (FillLaunch) and leaves
//               it at the first pass after its end (Sweep: the core says whether it lives, as
//               for liveness below); so it holds the live runs with an identity and those that
//               ended since the last pass. Each time the core is rebuilt from the store (start,
//               reload, take-over), Reindex makes it again from the core: the one scan of every
//               task, so that no run launched by an earlier master is missed.
//   liveness    CheckRunLive reads the core: the task's current run is `run`, and it is
//               LAUNCHING or RUNNING (not being stopped, not ended, not a removed instance).
//
// Thread-safety: every method is thread-safe; Start/Stop from one thread; Reindex and Sweep,
// which read the core, on the loop thread.

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "masterd/cluster.h"
#include "paceline/v1/host.pb.h"
#include "scheduler/actions.h"

namespace paceline::masterd {

class TaskCredentials {
 public:
  // `key`: access::DeriveTaskKey of the master's admin token.
  TaskCredentials(Cluster* cluster, std::string key, absl::Duration ttl);
  ~TaskCredentials() { Stop(); }

  const std::string& key() const { return key_; }

  // Whether the runs of `task` get a credential.
  static bool HasIdentity(const TaskSpec& task) { return task.identity || task.controller; }
  // Puts a credential for `launch`'s run into `msg` when its task has an identity, and indexes
  // the run.
  void FillLaunch(const scheduler::Launch& launch, v1::LaunchTask& msg, absl::Time now);

  // OK when run `run` of job/instance is live; UNAUTHENTICATED saying why not.
  absl::Status CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const;

  // One renewal pass at `now`: a new credential to the agent of every live run with an
  // identity; how many were sent.
  size_t RenewAll(absl::Time now);

  void Start();
  void Stop();

  // The index (see above). Reindex: made again from `core`, just rebuilt from the store. Sweep:
  // the indexed runs that `core` says live, with their hosts; the others leave the index.
  struct Due {
    std::string host;
    RunId run;
  };
  void Reindex(const scheduler::SchedulerCore& core);
  std::vector<Due> Sweep(const scheduler::SchedulerCore& core);
  size_t indexed() const;

 private:
  Cluster* const cluster_;
  const std::string key_;
  const absl::Duration ttl_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<TaskId, uint32_t> runs_ ABSL_GUARDED_BY(mu_);  // instance -> its run
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace paceline::masterd
