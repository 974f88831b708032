// JobService.GetEndpoints and WatchEndpoints: the endpoints of a service or stateful job
// (api/endpoints.h), one read of the job on the loop each, its hosts' addresses resolved off it.
//
// A watch polls: every change of the endpoints shows in the core (a task's state, health or
// readiness, its host) except an agent's connection, which shows in the hosts' addresses. So a
// watch reads again soon after an event of the job's tasks (the event hub wakes it; at most every
// kMinGap) and, for what has no event, every kPoll; it sends a list only when its version
// differs from the last one sent (and, idle, every kHeartbeat). Its cost is one read of one job
// (O(instances)) per wake-up, at most 1 / kMinGap a second; the master's stop or loss of the lead
// closes the hub's watchers, which ends the watch with the reason.

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_service_impl.h"
#include "common/status.h"
#include "dns/names.h"

namespace paceline::api {
namespace {

constexpr absl::Duration kPoll = absl::Milliseconds(200);
constexpr absl::Duration kMinGap = absl::Milliseconds(50);
constexpr absl::Duration kHeartbeat = absl::Seconds(15);

v1::JobEndpoints ToProto(const JobEndpoints& job, const std::string& domain) {
  v1::JobEndpoints out;
  out.set_job_id(job.job_id);
  if (domain.empty()) {
    out.set_dns_name_note("the master serves no DNS (paceline master --dns-listen)");
  } else if (absl::StatusOr<std::string> name = dns::ServiceNameOf(job.pool, job.name, domain);
             name.ok()) {
    out.set_dns_name(*name);
  } else {
    out.set_dns_name_note(std::string(name.status().message()));
  }
  out.set_version(VersionOf(job));
  for (const Endpoint& e : job.endpoints) {
    v1::Endpoint* p = out.add_endpoints();
    p->set_instance(e.instance);
    p->set_run(e.run);
    p->set_host(e.host);
    p->set_address(e.address);
    for (const auto& [name, port] : e.ports) (*p->mutable_ports())[name] = port;
    p->set_ready(e.ready);
    p->set_why_not_ready(e.why_not_ready);
  }
  return out;
}

grpc::Status NeedJobId(uint64_t job_id) {
  if (job_id != 0) return grpc::Status::OK;
  return ToGrpcStatus(absl::InvalidArgumentError("job_id: expected a job id, got 0"));
}

}  // namespace

absl::StatusOr<v1::JobEndpoints> JobServiceImpl::ReadEndpoints(grpc::ServerContext* ctx,
                                                               uint64_t job, bool check) {
  absl::StatusOr<JobEndpoints> got = cluster_->Read<absl::StatusOr<JobEndpoints>>(
      [&](const scheduler::SchedulerCore& core) -> absl::StatusOr<JobEndpoints> {
        if (check) RETURN_IF_ERROR(CheckJob(*access_, ctx, core, job));
        return CollectJobEndpoints(core, JobId(job));
      });
  if (!got.ok()) return got.status();
  ResolveAddresses(*got, endpoints_.address_of != nullptr
                             ? endpoints_.address_of
                             : HostAddressFn([](const std::string&) { return std::string(); }));
  return ToProto(*got, endpoints_.dns_domain);
}

grpc::Status JobServiceImpl::GetEndpoints(grpc::ServerContext* ctx,
                                          const v1::GetEndpointsRequest* req,
                                          v1::JobEndpoints* resp) {
  if (grpc::Status s = NeedJobId(req->job_id()); !s.ok()) return s;
  absl::StatusOr<v1::JobEndpoints> got = ReadEndpoints(ctx, req->job_id(), /*check=*/true);
  if (!got.ok()) return ToGrpcStatus(got.status());
  *resp = *std::move(got);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::WatchEndpoints(grpc::ServerContext* ctx,
                                            const v1::WatchEndpointsRequest* req,
                                            grpc::ServerWriter<v1::JobEndpoints>* writer) {
  if (grpc::Status s = NeedJobId(req->job_id()); !s.ok()) return s;
  if (endpoint_watches_.fetch_add(1) >= kMaxEndpointWatches) {
    endpoint_watches_.fetch_sub(1);
    return ToGrpcStatus(absl::ResourceExhaustedError(
        absl::StrCat("at most ", kMaxEndpointWatches,
                     " endpoint watches at once on this master; use GetEndpoints")));
  }
  absl::Cleanup release = [this] { endpoint_watches_.fetch_sub(1); };
  // The first read checks access and that the job has endpoints: its error is the answer.
  absl::StatusOr<v1::JobEndpoints> current = ReadEndpoints(ctx, req->job_id(), /*check=*/true);
  if (!current.ok()) return ToGrpcStatus(current.status());
  EventHub& hub = cluster_->events();
  std::shared_ptr<Watcher> watcher = hub.Subscribe(req->job_id(), /*capacity=*/4096);
  absl::Cleanup unsubscribe = [&] { hub.Unsubscribe(watcher.get()); };
  uint64_t sent = current->version();
  if (!writer->Write(*current)) return grpc::Status::OK;  // the client went away
  absl::Time last_write = absl::Now();
  absl::Time last_read = last_write;
  while (!ctx->IsCancelled()) {
    (void)watcher->Next(kPoll);  // woken early by an event of the job's tasks
    if (absl::Status s = watcher->status(); !s.ok()) {
      // Fell behind a burst of events: nothing is lost, the next read sees the state.
      if (!absl::IsResourceExhausted(s)) return ToGrpcStatus(s);
      hub.Unsubscribe(watcher.get());
      watcher = hub.Subscribe(req->job_id(), /*capacity=*/4096);
    }
    if (absl::Duration gap = absl::Now() - last_read; gap < kMinGap) absl::SleepFor(kMinGap - gap);
    if (ctx->IsCancelled()) break;
    last_read = absl::Now();
    current = ReadEndpoints(ctx, req->job_id(), /*check=*/false);
    if (absl::IsNotFound(current.status())) {
      // The master stopped leading, and the core it rebuilds has no jobs yet: not a deletion.
      // (The hub's watchers are closed on the loop before the core is dropped.)
      if (absl::Status s = watcher->status(); !s.ok() && !absl::IsResourceExhausted(s)) {
        return ToGrpcStatus(s);
      }
      // Deleted: say so, and end.
      v1::JobEndpoints gone;
      gone.set_job_id(req->job_id());
      gone.set_deleted(true);
      (void)writer->Write(gone);
      return grpc::Status::OK;
    }
    if (!current.ok()) return ToGrpcStatus(current.status());
    if (current->version() == sent && absl::Now() - last_write < kHeartbeat) continue;
    if (!writer->Write(*current)) return grpc::Status::OK;
    sent = current->version();
    last_write = absl::Now();
  }
  return grpc::Status::OK;
}

}  // namespace paceline::api
