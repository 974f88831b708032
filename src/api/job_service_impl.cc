#include "api/job_service_impl.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_not_found.h"
#include "api/secret_service.h"
#include "common/status.h"
#include "jobmgr/dependency_names.h"
#include "spec/yaml_spec.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"
#include "wire/job_info.h"
#include "wire/watch_events.h"

namespace paceline::api {
namespace {

using scheduler::SchedulerCore;

// An idle watch sends an empty event this often, so that both ends notice a broken connection.
constexpr absl::Duration kWatchHeartbeat = absl::Seconds(15);

v1::JobSummary SummaryOf(const jobmgr::Job& job) {
  v1::JobSummary s;
  s.set_id(job.id().value());
  s.set_name(job.spec().name);
  s.set_pool(job.pool());
  const jobmgr::JobOwner& owner = job.origin().owner;
  s.set_owner(owner.user.empty() ? job.spec().owner : owner.user);
  s.set_owner_group(owner.group);
  s.set_type(std::string(JobTypeName(job.spec().type)));
  s.set_state(std::string(JobStateName(job.state())));
  s.set_version(job.version());
  s.set_created_at_unix_ms(wire::ToUnixMillis(job.origin().created_at));
  s.set_instances(job.instances());
  s.set_priority(job.spec().priority);
  for (int i = 0; i < kNumTaskStates; ++i) {
    uint32_t n = job.count(static_cast<TaskState>(i));
    if (n > 0)
      (*s.mutable_task_counts())[std::string(TaskStateName(static_cast<TaskState>(i)))] = n;
  }
  for (const auto& [k, v] : job.spec().labels) (*s.mutable_labels())[k] = v;
  s.set_healthy(job.health_count(jobmgr::TaskHealth::kHealthy));
  s.set_unhealthy(job.health_count(jobmgr::TaskHealth::kUnhealthy));
  s.set_health_unknown(job.health_count(jobmgr::TaskHealth::kUnknown));
  absl::Time started = absl::InfiniteFuture();
  absl::Time finished = absl::InfinitePast();
  for (uint32_t i = 0; i < job.instances(); ++i) {
    const absl::Time st = job.task(i).started_at;
    const absl::Time fin = job.task(i).finished_at;
    if (st != absl::InfinitePast()) started = std::min(started, st);
    if (fin != absl::InfinitePast()) finished = std::max(finished, fin);
  }
  if (started != absl::InfiniteFuture()) s.set_started_at_unix_ms(wire::ToUnixMillis(started));
  if (job.live() == 0 && finished != absl::InfinitePast()) {
    s.set_finished_at_unix_ms(wire::ToUnixMillis(finished));
  }
  return s;
}

}  // namespace

grpc::Status JobServiceImpl::CreateJob(grpc::ServerContext* ctx, const v1::CreateJobRequest* req,
                                       v1::CreateJobResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  if (req->pool().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("pool: empty; name a leaf pool, e.g. /batch"));
  }
  absl::StatusOr<JobSpec> spec =
      ParseJobSpec(req->spec_yaml(), req->spec_name().empty() ? "request" : req->spec_name());
  if (!spec.ok()) return ToGrpcStatus(spec.status());
  if (absl::Status s = CheckSecretRefs(secrets_, req->pool(), *spec); !s.ok()) {
    return ToGrpcStatus(s);
  }
  jobmgr::JobOwner owner;
  const std::optional<access::Principal> caller = access_->Caller(ctx);
  if (caller.has_value()) owner = {caller->user, caller->group};
  return ToGrpcStatus(cluster_->Mutate([&](SchedulerCore& core, absl::Time now,
                                           scheduler::Actions& out) {
    RETURN_IF_ERROR(jobmgr::ResolveDependencies(*spec, req->pool(), core.jobs()));
    for (size_t i = 0; i < spec->depends_on.size(); ++i) {
      const jobmgr::Job* dep = core.jobs().GetJob(*jobmgr::DependencyId(spec->depends_on[i].job));
      if (!MayRead(caller, dep->pool())) {
        return absl::PermissionDeniedError(
            absl::StrCat("depends_on[", i, "].job: job ", dep->id().value(),
                         " is in a pool you may not read; a job may depend only on jobs its "
                         "submitter may see"));
      }
    }
    absl::StatusOr<JobId> id = core.job_control().CreateJob(*spec, req->pool(), now, out, owner);
    if (!id.ok()) return id.status();
    resp->set_job_id(id->value());
    return absl::OkStatus();
  }));
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                                    v1::GetJobResponse* resp) {
  return ToGrpcStatus(cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    *resp->mutable_job() = SummaryOf(*job);
    resp->set_spec_yaml(PrintJobSpec(job->spec()));
    wire::SetRolesAndGang(job->spec(), *resp);
    if (!job->updates().empty()) {
      *resp->mutable_update() = wire::UpdateInfoOf(job->id(), job->updates().back());
    }
    for (uint32_t i = 0; i < job->instances(); ++i) {
      TaskState s = job->task(i).state;
      if (s == TaskState::kPending || s == TaskState::kReady) {
        resp->set_pending_reason(
            absl::StrCat("instance ", i, ": ", core.WhyPending(TaskId{job->id(), i})));
        break;
      }
    }
    return absl::OkStatus();
  }));
}

grpc::Status JobServiceImpl::QueryJobs(grpc::ServerContext* ctx, const v1::QueryJobsRequest* req,
                                       v1::QueryJobsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  const std::optional<access::Principal> caller = access_->Caller(ctx);
  uint64_t after_id = 0;
  if (!req->page_token().empty() && !absl::SimpleAtoi(req->page_token(), &after_id)) {
    return ToGrpcStatus(
        absl::InvalidArgumentError("page_token: not a token from a previous QueryJobs response"));
  }
  if (req->page_size() > 1000) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("page_size: ", req->page_size(), " is above the maximum of 1000")));
  }
  for (const std::string& s : req->states()) {
    if (!JobStateFromName(s)) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat("states: unknown job state '", s,
                       "'; expected PENDING, RUNNING, SUCCEEDED, FAILED, KILLING or KILLED")));
    }
  }
  for (const std::string& t : req->types()) {
    if (!JobTypeFromName(t)) {
      return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
          "types: unknown job type '", t, "'; expected batch, service, stateful or daemon")));
    }
  }
  uint32_t page = req->page_size() == 0 ? 100 : req->page_size();
  cluster_->Read<bool>([&](const SchedulerCore& core) {
    core.jobs().ForEachJobAfter(JobId(after_id), [&](const jobmgr::Job& j) {
      const jobmgr::Job* job = &j;  // true: go on to the next job
      if (!req->pool().empty() && job->pool() != req->pool()) return true;
      if (!MayRead(caller, job->pool())) return true;
      if (!req->owner().empty() && job->spec().owner != req->owner() &&
          job->origin().owner.user != req->owner()) {
        return true;
      }
      if (!req->name().empty() && job->spec().name != req->name()) return true;
      if (!req->types().empty() && std::find(req->types().begin(), req->types().end(),
                                             JobTypeName(job->spec().type)) == req->types().end()) {
        return true;
      }
      int64_t created = wire::ToUnixMillis(job->origin().created_at);
      if (req->created_after_unix_ms() > 0 && created < req->created_after_unix_ms()) return true;
      if (req->created_before_unix_ms() > 0 && created >= req->created_before_unix_ms())
        return true;
      if (!req->states().empty()) {
        std::string state(JobStateName(job->state()));
        if (std::find(req->states().begin(), req->states().end(), state) == req->states().end()) {
          return true;
        }
      }
      bool labels_match = true;
      for (const auto& [k, v] : req->labels()) {
        auto it = job->spec().labels.find(k);
        labels_match &= it != job->spec().labels.end() && it->second == v;
      }
      if (!labels_match) return true;
      if (static_cast<uint32_t>(resp->jobs_size()) == page) {
        resp->set_next_page_token(absl::StrCat(resp->jobs(resp->jobs_size() - 1).id()));
        return false;
      }
      *resp->add_jobs() = SummaryOf(*job);
      return true;
    });
    return true;
  });
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::KillJob(grpc::ServerContext* ctx, const v1::KillJobRequest* req,
                                     v1::KillJobResponse*) {
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
        return core.job_control().KillJob(JobId(req->job_id()), now, out);
      }));
}

grpc::Status JobServiceImpl::DeleteJob(grpc::ServerContext* ctx, const v1::DeleteJobRequest* req,
                                       v1::DeleteJobResponse*) {
  bool stateful = false;
  absl::Status s = cluster_->Mutate([&](SchedulerCore& core, absl::Time, scheduler::Actions& out) {
    RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    stateful = job != nullptr && job->spec().type == JobType::kStateful;
    return core.job_control().DeleteJob(JobId(req->job_id()), out);
  });
  if (s.ok() && stateful && req->purge_volumes()) {
    v1::MasterMessage purge;
    purge.mutable_purge_volumes()->set_job_id(req->job_id());
    cluster_->agents().Broadcast(purge);
  }
  return ToGrpcStatus(s);
}

grpc::Status JobServiceImpl::RestartJob(grpc::ServerContext* ctx, const v1::RestartJobRequest* req,
                                        v1::RestartJobResponse* resp) {
  for (int i = 0; i < req->ranges_size(); ++i) {
    const v1::InstanceRange& r = req->ranges(i);
    if (r.first() > r.last()) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat("ranges[", i, "]: first ", r.first(), " is after last ", r.last())));
    }
  }
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
        const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
        if (job == nullptr) return JobNotFound(req->job_id());
        std::vector<uint32_t> instances;
        if (req->ranges().empty()) {
          for (uint32_t i = 0; i < job->instances(); ++i) instances.push_back(i);
        }
        for (const v1::InstanceRange& r : req->ranges()) {
          if (r.last() >= job->instances()) {
            return absl::InvalidArgumentError(
                absl::StrCat("ranges: instance ", r.last(), " is out of range: job ", req->job_id(),
                             " has ", job->instances(), " instances"));
          }
          for (uint32_t i = r.first(); i <= r.last(); ++i) instances.push_back(i);
        }
        std::sort(instances.begin(), instances.end());
        instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
        resp->set_restarted(static_cast<uint32_t>(instances.size()));
        return core.job_control().RestartInstances(JobId(req->job_id()), instances, now, out);
      }));
}

grpc::Status JobServiceImpl::Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req,
                                   grpc::ServerWriter<v1::WatchEvent>* writer) {
  access::Target target =
      req->job_id() == 0 ? access::Target{} : JobTarget(*cluster_, req->job_id());
  if (grpc::Status a = access_->Check(ctx, target); !a.ok()) return a;
  // Watching every job: only the events of jobs the caller may read.
  const std::optional<access::Principal> caller = access_->Caller(ctx);
  absl::flat_hash_map<uint64_t, bool> readable;
  auto may_read = [&](uint64_t job_id) {
    if (job_id == 0 || req->job_id() != 0 || MayRead(caller, "/")) return true;
    if (readable.size() > 100000) readable.clear();  // a long watch of a busy cluster
    auto [it, fresh] = readable.try_emplace(job_id, false);
    if (fresh) it->second = MayRead(caller, JobTarget(*cluster_, job_id).pool);
    return it->second;
  };
  EventHub& hub = cluster_->events();
  std::shared_ptr<Watcher> watcher;
  std::optional<v1::WatchEvent> current;
  // Subscribing on the loop: every change the core makes after this point reaches the watcher.
  absl::Status s = cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    if (req->job_id() != 0) {
      const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
      if (job == nullptr) return JobNotFound(req->job_id());
      current = wire::JobChangeOf(*job, absl::Now());
    }
    watcher = hub.Subscribe(req->job_id());
    return absl::OkStatus();
  });
  if (!s.ok()) return ToGrpcStatus(s);
  absl::Cleanup unsubscribe = [&] { hub.Unsubscribe(watcher.get()); };
  v1::WatchEvent started;
  started.set_started(true);
  started.set_at_unix_ms(absl::ToUnixMillis(absl::Now()));
  if (!writer->Write(started)) return grpc::Status::OK;
  if (current && !writer->Write(*current)) return grpc::Status::OK;
  absl::Time last_write = absl::Now();
  while (!ctx->IsCancelled()) {
    bool open = watcher->status().ok();
    std::vector<v1::WatchEvent> events =
        watcher->Next(open ? absl::Milliseconds(250) : absl::ZeroDuration());
    if (events.empty() && absl::Now() - last_write >= kWatchHeartbeat) {
      events.emplace_back().set_at_unix_ms(absl::ToUnixMillis(absl::Now()));
    }
    for (const v1::WatchEvent& e : events) {
      if (!may_read(e.job_id())) continue;
      if (!writer->Write(e)) return grpc::Status::OK;  // the client went away
      last_write = absl::Now();
    }
    if (!open && events.empty()) return ToGrpcStatus(watcher->status());
  }
  return grpc::Status::OK;
}

}  // namespace paceline::api
