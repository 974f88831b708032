#include "api/host_service.h"

#include "absl/strings/str_cat.h"
#include "api/grpc_status.h"
#include "common/status.h"
#include "common/task_state.h"
#include "master/proto_convert.h"

namespace paceline::api {
namespace {

using scheduler::SchedulerCore;

absl::StatusOr<TaskState> ParseReportedState(const std::string& s) {
  std::optional<TaskState> st = TaskStateFromName(s);
  if (!st || (*st != TaskState::kRunning && !IsTerminal(*st))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "status.state: '", s, "'; expected RUNNING, SUCCEEDED, FAILED, KILLED or LOST"));
  }
  return *st;
}

scheduler::HostRegistration RegistrationOf(const v1::AgentRegister& r) {
  scheduler::HostRegistration reg;
  reg.name = r.host();
  reg.capacity = master::FromProto(r.capacity());
  reg.gpu_models.assign(r.gpu_models().begin(), r.gpu_models().end());
  for (const auto& [k, v] : r.labels()) reg.labels.emplace_back(k, v);
  std::sort(reg.labels.begin(), reg.labels.end());
  for (const v1::PortRange& p : r.ports()) reg.ports.push_back({p.first(), p.last()});
  return reg;
}

std::pair<scheduler::HostUsageSample, std::vector<scheduler::ReportedUsage>> UsageOf(
    const v1::AgentUsage& u) {
  scheduler::HostUsageSample sample;
  sample.used = Resources::Of(u.host_cpu_milli(), u.host_memory_used_bytes());
  sample.memory_total_bytes = u.host_memory_total_bytes();
  sample.interval = absl::Milliseconds(std::max<int64_t>(100, u.interval_ms()));
  std::vector<scheduler::ReportedUsage> runs;
  runs.reserve(u.runs_size());
  for (const v1::RunUsage& r : u.runs()) {
    runs.push_back({master::FromProto(r.run()), Resources::Of(r.cpu_milli(), r.memory_bytes())});
  }
  return {sample, std::move(runs)};
}

}  // namespace

grpc::Status HostServiceImpl::Maintain(grpc::ServerContext* ctx, const std::string& host,
                                       store::HostMaintenance next,
                                       v1::HostMaintenanceResponse* resp) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  if (host.empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("host: empty; name a host (see host list)"));
  }
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(core.SetMaintenance(host, next, now, out));
        resp->set_maintenance(std::string(MaintenanceName(core.hosts().Find(host)->maintenance)));
        return absl::OkStatus();
      }));
}

grpc::Status HostServiceImpl::DrainHost(grpc::ServerContext* ctx,
                                        const v1::HostMaintenanceRequest* req,
                                        v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), store::HostMaintenance::kDraining, resp);
}

grpc::Status HostServiceImpl::DownHost(grpc::ServerContext* ctx,
                                       const v1::HostMaintenanceRequest* req,
                                       v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), store::HostMaintenance::kDown, resp);
}

grpc::Status HostServiceImpl::UpHost(grpc::ServerContext* ctx,
                                     const v1::HostMaintenanceRequest* req,
                                     v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), store::HostMaintenance::kUp, resp);
}

grpc::Status HostServiceImpl::ListHosts(grpc::ServerContext* ctx, const v1::ListHostsRequest*,
                                        v1::ListHostsResponse* resp) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  const absl::Time now = absl::Now();
  cluster_->Read<bool>([&](const SchedulerCore& core) {
    for (const scheduler::TrackedHost& h : core.hosts().all()) {
      v1::HostInfo* info = resp->add_hosts();
      info->set_name(h.spec.name);
      info->set_connected(h.connected);
      info->set_last_seen_unix_ms(master::ToUnixMillis(h.last_seen));
      *info->mutable_capacity() = master::ToProto(h.spec.capacity);
      for (const auto& [k, v] : h.spec.labels) (*info->mutable_labels())[k] = v;
      const placement::HostState* state = core.snapshot().host(h.id);
      if (state != nullptr) {
        *info->mutable_allocated() = master::ToProto(state->allocated());
        info->set_tasks(static_cast<uint32_t>(state->tasks().size()));
      }
      info->set_state(!h.connected       ? "LOST"
                      : state != nullptr ? std::string(placement::HostStatusName(state->status()))
                                         : "UP");
      info->set_isolation(core.hosts().isolation(h.id));
      info->set_maintenance(std::string(MaintenanceName(h.maintenance)));
      if (std::optional<scheduler::HostUsageView> u = core.HostUsage(h.spec.name, now)) {
        *info->mutable_used() = master::ToProto(u->used);
        *info->mutable_tasks_used() = master::ToProto(u->tasks_used);
        info->set_memory_total_bytes(u->memory_total_bytes);
        info->set_usage_at_unix_ms(master::ToUnixMillis(u->at));
      }
    }
    return true;
  });
  return grpc::Status::OK;
}

grpc::Status AgentServiceImpl::Connect(grpc::ServerContext* ctx, master::AgentStream* stream) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_register_() || first.register_().host().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message of an agent stream must be register with a host name");
  }
  const std::string host = first.register_().host();
  scheduler::HostRegistration reg = RegistrationOf(first.register_());
  std::vector<scheduler::ReportedRun> running;
  for (const v1::RunningTask& r : first.register_().running()) {
    scheduler::ReportedRun run;
    run.run = master::FromProto(r.run());
    for (const auto& [name, port] : r.ports()) run.ports.emplace_back(name, port);
    run.gpu_devices.assign(r.gpu_devices().begin(), r.gpu_devices().end());
    running.push_back(std::move(run));
  }
  std::string isolation = first.register_().isolation();

  auto session =
      std::make_shared<master::AgentSession>(host, stream, master::AddressOfPeer(ctx->peer()));
  cluster_->Attach(session);
  auto finish = [&](grpc::Status s) {
    cluster_->Detach(session.get());
    session->Close();
    session->Join();
    return s;
  };
  absl::Status registered =
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        absl::Status s = core.RegisterHost(reg, running, now, out);
        if (s.ok()) core.SetIsolation(host, isolation);
        return s;
      });
  if (!registered.ok()) return finish(ToGrpcStatus(registered));
  v1::MasterMessage hello;
  hello.mutable_registered()->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(heartbeat_interval_));
  session->Send(std::move(hello));

  v1::AgentMessage msg;
  while (stream->Read(&msg)) {
    if (msg.has_heartbeat()) {
      cluster_->MutateAsync(
          [host](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
            return core.Heartbeat(host, now)
                       ? absl::OkStatus()
                       : absl::FailedPreconditionError("host was declared lost");
          },
          [ctx](absl::Status s) {
            if (!s.ok()) ctx->TryCancel();  // the agent reconnects and registers again
          });
    } else if (msg.has_logs()) {
      cluster_->DeliverLogs(msg.logs());
    } else if (msg.has_usage()) {
      // Soft state: applied on the loop, nothing to store or acknowledge.
      auto [sample, runs] = UsageOf(msg.usage());
      cluster_->MutateAsync(
          [host, sample, runs](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
            core.ReportUsage(host, sample, runs, now);
            return absl::OkStatus();
          },
          [](absl::Status) {});
    } else if (msg.has_status()) {
      const v1::TaskStatusUpdate& u = msg.status();
      absl::StatusOr<TaskState> state = ParseReportedState(u.state());
      if (!state.ok()) return finish(ToGrpcStatus(state.status()));
      jobmgr::StatusReport report;
      report.run = master::FromProto(u.run());
      report.host = host;
      report.state = *state;
      report.exit_code = u.exit_code();
      report.signal = u.signal();
      report.reason = jobmgr::TaskReasonFromName(u.reason()).value_or(jobmgr::TaskReason::kNone);
      report.message = u.message();
      uint64_t seq = u.seq();
      std::weak_ptr<master::AgentSession> weak = session;
      cluster_->MutateAsync(
          [host, report](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
            core.Heartbeat(host, now);
            core.OnStatus(report, now, out);
            return absl::OkStatus();
          },
          [weak, seq](absl::Status s) {
            if (!s.ok()) return;  // not durable: no ack, the agent resends
            if (auto session = weak.lock()) {
              v1::MasterMessage ack;
              ack.mutable_ack()->set_seq(seq);
              session->Send(std::move(ack));
            }
          });
    }
  }
  return finish(grpc::Status::OK);
}

}  // namespace paceline::api
