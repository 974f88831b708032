#include "masterd/task_credentials.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "access/task_credential.h"
#include "common/task_state.h"

namespace paceline::masterd {
namespace {

v1::TaskCredential Mint(const std::string& key, uint64_t job, uint32_t instance, uint32_t run,
                        absl::Time expires) {
  access::TaskClaim claim{job, instance, run, expires};
  v1::TaskCredential c;
  c.set_token(access::MintTaskToken(key, claim));
  c.set_expires_at_unix_ms(absl::ToUnixSeconds(expires) * 1000);
  return c;
}

bool Live(TaskState s) { return s == TaskState::kLaunching || s == TaskState::kRunning; }

}  // namespace

TaskCredentials::TaskCredentials(Cluster* cluster, std::string key, absl::Duration ttl)
    : cluster_(cluster), key_(std::move(key)), ttl_(ttl) {}

void TaskCredentials::FillLaunch(const scheduler::Launch& launch, v1::LaunchTask& msg,
                                 absl::Time now) {
  if (launch.task == nullptr || !HasIdentity(*launch.task)) return;
  *msg.mutable_credential() =
      Mint(key_, launch.run.task.job.value(), launch.run.task.instance, launch.run.run, now + ttl_);
  absl::MutexLock lock(&mu_);
  runs_[launch.run.task] = launch.run.run;  // a new run of the instance replaces the last
}

void TaskCredentials::Reindex(const scheduler::SchedulerCore& core) {
  absl::flat_hash_map<TaskId, uint32_t> runs;
  core.jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    for (uint32_t i = 0; i < job.instances(); ++i) {
      const jobmgr::TaskRuntime& t = job.task(i);
      if (!Live(t.state) || t.host == jobmgr::kNoHost) continue;
      std::shared_ptr<const TaskSpec> task = job.TaskFor(i);
      if (task != nullptr && HasIdentity(*task)) runs[TaskId{job.id(), i}] = t.run;
    }
    return true;
  });
  absl::MutexLock lock(&mu_);
  runs_ = std::move(runs);
}

std::vector<TaskCredentials::Due> TaskCredentials::Sweep(const scheduler::SchedulerCore& core) {
  std::vector<Due> due;
  absl::MutexLock lock(&mu_);
  for (auto it = runs_.begin(); it != runs_.end();) {
    const auto& [task, run] = *it;
    const jobmgr::Job* job = core.jobs().GetJob(task.job);
    const jobmgr::TaskRuntime* t =
        job != nullptr && task.instance < job->instances() ? &job->task(task.instance) : nullptr;
    if (t == nullptr || t->run != run || !Live(t->state) || t->host == jobmgr::kNoHost) {
      runs_.erase(it++);  // ended (or replaced by a run the next launch indexes)
      continue;
    }
    due.push_back({core.jobs().HostName(t->host), RunId{task, run}});
    ++it;
  }
  return due;
}

size_t TaskCredentials::indexed() const {
  absl::MutexLock lock(&mu_);
  return runs_.size();
}

absl::Status TaskCredentials::CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const {
  const std::string who = absl::StrCat("task:", job, "/", instance, "/", run);
  return cluster_->Read<absl::Status>([&](const scheduler::SchedulerCore& core) {
    const jobmgr::Job* j = core.jobs().GetJob(JobId(job));
    if (j == nullptr) {
      return absl::UnauthenticatedError(
          absl::StrCat(who, ": job ", job, " is gone; the credential ended with its run"));
    }
    if (instance >= j->instances()) {
      return absl::UnauthenticatedError(absl::StrCat(who, ": the job has no instance ", instance,
                                                     "; the credential ended with its run"));
    }
    const jobmgr::TaskRuntime& t = j->task(instance);
    if (t.run != run || !Live(t.state)) {
      return absl::UnauthenticatedError(absl::StrCat(
          who, ": run ", run, " has ended (the task is ", TaskStateName(t.state), " in run ", t.run,
          "); a task's credential is valid only while its run lives"));
    }
    return absl::OkStatus();
  });
}

size_t TaskCredentials::RenewAll(absl::Time now) {
  if (!cluster_->keeper().Serving().ok()) return 0;
  std::vector<Due> due = cluster_->Read<std::vector<Due>>(
      [this](const scheduler::SchedulerCore& core) { return Sweep(core); });
  size_t sent = 0;
  for (const Due& d : due) {
    v1::MasterMessage msg;
    v1::TaskCredentialRenewal* r = msg.mutable_renew_credential();
    r->mutable_run()->set_job_id(d.run.task.job.value());
    r->mutable_run()->set_instance(d.run.task.instance);
    r->mutable_run()->set_run(d.run.run);
    *r->mutable_credential() =
        Mint(key_, d.run.task.job.value(), d.run.task.instance, d.run.run, now + ttl_);
    if (cluster_->agents().SendTo(d.host, std::move(msg))) ++sent;
  }
  return sent;
}

void TaskCredentials::Start() {
  thread_ = std::thread([this] {
    const absl::Duration period = ttl_ / 3;
    while (!stop_.WaitForNotificationWithTimeout(period)) RenewAll(absl::Now());
  });
}

void TaskCredentials::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

}  // namespace paceline::masterd
