#pragma once
// TaskCredentials: the master's side of task credentials (access/task_credential.h,
// docs/security.md "Task credentials") — mints one into the launch of every run with an
// identity (task.identity, or a controller), renews them over the agents' streams before they
// expire, and answers whether a run still lives (the check behind every use of one).
//
//   launch      FillLaunch puts a token for the run, valid `ttl`, into its LaunchTask.
//   renewal     a thread of its own, every ttl/3: one read on the loop lists the live runs with
//               an identity (LAUNCHING or RUNNING, O(tasks)), then a new token for each goes to
//               its host's agent (MasterMessage.renew_credential), which replaces the file. A
//               run whose token is not renewed (its host is not connected) keeps the old one
//               until it expires. Only a master that serves renews.
//   liveness    CheckRunLive reads the core: the task's current run is `run`, and it is
//               LAUNCHING or RUNNING (not being stopped, not ended, not a removed instance).
//
// Thread-safety: every method is thread-safe; Start/Stop from one thread.

#include <cstdint>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "masterd/cluster.h"
#include "paceline/v1/host.pb.h"
#include "scheduler/actions.h"

namespace paceline::masterd {

// How long a task credential is valid; it is renewed at a third of it.
inline constexpr absl::Duration kDefaultTaskCredentialTtl = absl::Minutes(10);

class TaskCredentials {
 public:
  // `key`: access::DeriveTaskKey of the master's admin token.
  TaskCredentials(Cluster* cluster, std::string key, absl::Duration ttl);
  ~TaskCredentials() { Stop(); }

  const std::string& key() const { return key_; }

  // Whether the runs of `task` get a credential.
  static bool HasIdentity(const TaskSpec& task) { return task.identity || task.controller; }
  // Puts a credential for `launch`'s run into `msg` when its task has an identity.
  void FillLaunch(const scheduler::Launch& launch, v1::LaunchTask& msg, absl::Time now) const;

  // OK when run `run` of job/instance is live; UNAUTHENTICATED saying why not.
  absl::Status CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const;

  // One renewal pass at `now`: a new credential to the agent of every live run with an
  // identity; how many were sent.
  size_t RenewAll(absl::Time now);

  void Start();
  void Stop();

 private:
  Cluster* const cluster_;
  const std::string key_;
  const absl::Duration ttl_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace paceline::masterd
