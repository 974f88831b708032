#include "api/task_service_impl.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_not_found.h"
#include "common/status.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"
#include "wire/watch_events.h"

namespace paceline::api {
namespace {

using scheduler::SchedulerCore;

v1::TaskInfo TaskInfoOf(const SchedulerCore& core, const jobmgr::Job& job, uint32_t i,
                        const TaskServiceImpl::AddressOf& address_of) {
  const jobmgr::TaskRuntime& t = job.task(i);
  v1::TaskInfo info;
  info.set_job_id(job.id().value());
  info.set_instance(i);
  info.set_run(t.run);
  info.set_state(wire::ToProto(t.state));
  if (t.host != jobmgr::kNoHost) info.set_host(core.jobs().HostName(t.host));
  info.set_started_at_unix_ms(wire::ToUnixMillis(t.started_at));
  info.set_finished_at_unix_ms(wire::ToUnixMillis(t.finished_at));
  info.set_exit_code(t.exit_code);
  info.set_signal(t.signal);
  info.set_reason(std::string(jobmgr::TaskReasonName(t.reason)));
  info.set_failures(t.failures);
  info.set_version(t.spec_version);
  if (t.volume_host != jobmgr::kNoHost) info.set_volume_host(core.jobs().HostName(t.volume_host));
  info.set_pending_reason(core.WhyPending(TaskId{job.id(), i}));
  *info.mutable_resources() = wire::ToProto(job.TaskFor(i)->resources);
  info.set_health(std::string(jobmgr::TaskHealthName(t.health)));
  info.set_readiness(std::string(jobmgr::TaskReadinessName(t.readiness)));
  if (const RoleSpec* role = job.spec().RoleOf(i)) info.set_role(role->name);
  info.set_gang_attempt(t.gang_attempt);
  // A live run: where it listens (the ports it holds, its host's address).
  if ((t.state == TaskState::kLaunching || t.state == TaskState::kRunning) &&
      t.host != jobmgr::kNoHost) {
    if (const placement::Usage* u = core.snapshot().TaskUsage(TaskId{job.id(), i})) {
      const std::vector<std::string>& names = job.TaskFor(i)->ports;
      for (size_t k = 0; k < u->ports().size() && k < names.size(); ++k) {
        (*info.mutable_ports())[names[k]] = u->ports()[k];
      }
    }
    if (address_of) info.set_address(address_of(core.jobs().HostName(t.host)));
  }
  if (std::optional<scheduler::RunUsageView> u =
          core.agents().RunUsage(TaskId{job.id(), i}, absl::Now())) {
    *info.mutable_used() = wire::ToProto(u->used);
    info.set_usage_at_unix_ms(wire::ToUnixMillis(u->at));
  }
  return info;
}

}  // namespace

grpc::Status TaskServiceImpl::ReleaseVolume(grpc::ServerContext* ctx,
                                            const v1::ReleaseVolumeRequest* req,
                                            v1::ReleaseVolumeResponse*) {
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
        return core.job_control().ReleaseVolume(TaskId{JobId(req->job_id()), req->instance()}, now,
                                                out);
      }));
}

grpc::Status TaskServiceImpl::KillTask(grpc::ServerContext* ctx, const v1::KillTaskRequest* req,
                                       v1::KillTaskResponse*) {
  return ToGrpcStatus(cluster_->Mutate([&](SchedulerCore& core, absl::Time now,
                                           scheduler::Actions& out) {
    RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
    return core.job_control().KillInstance(TaskId{JobId(req->job_id()), req->instance()}, now, out);
  }));
}

grpc::Status TaskServiceImpl::ListTasks(grpc::ServerContext* ctx, const v1::ListTasksRequest* req,
                                        v1::ListTasksResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  std::array<bool, kNumTaskStates> wanted{};
  for (int s : req->states()) {
    absl::StatusOr<TaskState> state = wire::FromProto(static_cast<v1::Task::State>(s), "states");
    if (!state.ok()) return ToGrpcStatus(state.status());
    wanted[static_cast<int>(*state)] = true;
  }
  return ToGrpcStatus(cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    for (uint32_t i = 0; i < job->instances(); ++i) {
      if (!req->states().empty() && !wanted[static_cast<int>(job->task(i).state)]) continue;
      *resp->add_tasks() = TaskInfoOf(core, *job, i, address_of_);
    }
    return absl::OkStatus();
  }));
}

grpc::Status TaskServiceImpl::GetTask(grpc::ServerContext* ctx, const v1::GetTaskRequest* req,
                                      v1::GetTaskResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  absl::Status s = cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    if (req->instance() >= job->instances()) {
      return absl::NotFoundError(absl::StrCat("job ", req->job_id(), " has ", job->instances(),
                                              " instances; no instance ", req->instance()));
    }
    *resp->mutable_task() = TaskInfoOf(core, *job, req->instance(), address_of_);
    return absl::OkStatus();
  });
  if (!s.ok()) return ToGrpcStatus(s);
  // The history of runs, from the events in the store (read on this thread: the store
  // serialises reads with the writer through SQLite's WAL).
  v1::ListTaskEventsRequest ereq;
  ereq.set_job_id(req->job_id());
  ereq.set_instance(req->instance());
  v1::ListTaskEventsResponse events;
  if (grpc::Status e = ListTaskEvents(ctx, &ereq, &events); !e.ok()) return e;
  for (const v1::TaskEvent& e : events.events()) {
    if (resp->runs_size() == 0 || resp->runs(resp->runs_size() - 1).run() != e.run()) {
      resp->add_runs()->set_run(e.run());
    }
    v1::TaskRun* run = resp->mutable_runs(resp->runs_size() - 1);
    if (!e.host().empty()) run->set_host(e.host());
    // Health changes are RUNNING events too: the run started at the first one.
    if (e.state() == v1::Task::RUNNING && run->started_at_unix_ms() == 0) {
      run->set_started_at_unix_ms(e.at_unix_ms());
    }
    absl::StatusOr<TaskState> st = wire::FromProto(e.state(), "state");
    if (st.ok() && IsTerminal(*st)) {
      run->set_finished_at_unix_ms(e.at_unix_ms());
      run->set_final_state(e.state());
      run->set_reason(e.reason());
      run->set_message(e.message());
    }
  }
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::ListTaskEvents(grpc::ServerContext* ctx,
                                             const v1::ListTaskEventsRequest* req,
                                             v1::ListTaskEventsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  absl::StatusOr<std::vector<records::TaskEvent>> events =
      cluster_->ReadEvents(TaskId{JobId(req->job_id()), req->instance()}, req->limit());
  if (!events.ok()) return ToGrpcStatus(events.status());
  for (const records::TaskEvent& e : *events) *resp->add_events() = wire::ToProto(e);
  return grpc::Status::OK;
}

grpc::Status TaskServiceImpl::GetTaskLogs(grpc::ServerContext* ctx,
                                          const v1::GetTaskLogsRequest* req,
                                          v1::GetTaskLogsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  TaskId task{JobId(req->job_id()), req->instance()};
  uint32_t run = req->run();
  std::string host;
  bool launching = false;  // the current run, not started yet: no output so far
  absl::Status s = cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    const jobmgr::Job* job = core.jobs().GetJob(task.job);
    if (job == nullptr) return JobNotFound(req->job_id());
    if (task.instance >= job->instances()) {
      return absl::NotFoundError(absl::StrCat("job ", req->job_id(), " has ", job->instances(),
                                              " instances; no instance ", req->instance()));
    }
    const jobmgr::TaskRuntime& t = job->task(task.instance);
    if (run == 0 || run == t.run) {
      run = t.run;
      if (t.host != jobmgr::kNoHost) host = core.jobs().HostName(t.host);
      launching = t.state == TaskState::kPlaced || t.state == TaskState::kLaunching;
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return ToGrpcStatus(s);
  if (launching && !host.empty()) {
    // Its agent may not even have the launch yet.
    resp->set_next_offset(req->offset());
    resp->set_run(run);
    resp->set_host(host);
    return grpc::Status::OK;
  }
  if (host.empty()) {
    // An earlier run, or a current run that has not been placed: its host is in the events.
    absl::StatusOr<std::vector<records::TaskEvent>> events = cluster_->ReadEvents(task, 0);
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const records::TaskEvent& e : *events) {
      if (e.run.run == run && !e.host.empty()) host = e.host;
    }
  }
  if (host.empty()) {
    return ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
        "task ", task.ToString(), " run ", run, " has not been placed on a host yet: no logs")));
  }
  v1::LogRequest lr;
  *lr.mutable_run() = wire::ToProto(RunId{task, run});
  lr.set_stderr(req->stderr());
  lr.set_tail_lines(req->tail_lines());
  lr.set_offset(req->offset());
  lr.set_max_bytes(1 << 20);
  absl::StatusOr<v1::LogResponse> logs = cluster_->agents().FetchLogs(host, lr, absl::Seconds(10));
  if (!logs.ok()) return ToGrpcStatus(logs.status());
  resp->set_data(logs->data());
  resp->set_next_offset(logs->next_offset());
  resp->set_finished(logs->finished());
  resp->set_run(run);
  resp->set_host(host);
  return grpc::Status::OK;
}

}  // namespace paceline::api
