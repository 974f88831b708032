#include "api/host_service.h"

#include "absl/strings/str_cat.h"
#include "api/agent_session.h"
#include "api/grpc_status.h"
#include "common/status.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"

namespace paceline::api {

using scheduler::SchedulerCore;

grpc::Status HostServiceImpl::Maintain(grpc::ServerContext* ctx, const std::string& host,
                                       records::HostMaintenance next,
                                       v1::HostMaintenanceResponse* resp) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  if (host.empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("host: empty; name a host (see host list)"));
  }
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(core.agents().SetMaintenance(host, next, now, out));
        resp->set_maintenance(std::string(MaintenanceName(core.hosts().Find(host)->maintenance)));
        return absl::OkStatus();
      }));
}

grpc::Status HostServiceImpl::DrainHost(grpc::ServerContext* ctx,
                                        const v1::HostMaintenanceRequest* req,
                                        v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), records::HostMaintenance::kDraining, resp);
}

grpc::Status HostServiceImpl::DownHost(grpc::ServerContext* ctx,
                                       const v1::HostMaintenanceRequest* req,
                                       v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), records::HostMaintenance::kDown, resp);
}

grpc::Status HostServiceImpl::UpHost(grpc::ServerContext* ctx,
                                     const v1::HostMaintenanceRequest* req,
                                     v1::HostMaintenanceResponse* resp) {
  return Maintain(ctx, req->host(), records::HostMaintenance::kUp, resp);
}

grpc::Status HostServiceImpl::ListHosts(grpc::ServerContext* ctx, const v1::ListHostsRequest*,
                                        v1::ListHostsResponse* resp) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  const absl::Time now = absl::Now();
  cluster_->Read<bool>([&](const SchedulerCore& core) {
    for (const hostmgr::TrackedHost& h : core.hosts().all()) {
      v1::HostInfo* info = resp->add_hosts();
      info->set_name(h.spec.name);
      info->set_connected(h.connected);
      info->set_last_seen_unix_ms(wire::ToUnixMillis(h.last_seen));
      *info->mutable_capacity() = wire::ToProto(h.spec.capacity);
      for (const auto& [k, v] : h.spec.labels) (*info->mutable_labels())[k] = v;
      const placement::HostState* state = core.snapshot().host(h.id);
      if (state != nullptr) {
        *info->mutable_allocated() = wire::ToProto(state->allocated());
        *info->mutable_revocable_allocated() = wire::ToProto(state->revocable_allocated());
        *info->mutable_slack() = wire::ToProto(state->effective_slack());
        info->set_tasks(static_cast<uint32_t>(state->tasks().size()));
      }
      info->set_state(h.reconnecting     ? "RECONNECTING"
                      : !h.connected     ? "LOST"
                      : state != nullptr ? std::string(placement::HostStatusName(state->status()))
                                         : "UP");
      info->set_isolation(core.hosts().isolation(h.id));
      info->set_maintenance(std::string(MaintenanceName(h.maintenance)));
      if (std::optional<scheduler::HostUsageView> u = core.agents().HostUsage(h.spec.name, now)) {
        *info->mutable_used() = wire::ToProto(u->used);
        *info->mutable_tasks_used() = wire::ToProto(u->tasks_used);
        info->set_memory_total_bytes(u->memory_total_bytes);
        info->set_usage_at_unix_ms(wire::ToUnixMillis(u->at));
      }
    }
    return true;
  });
  return grpc::Status::OK;
}

grpc::Status AgentServiceImpl::Connect(grpc::ServerContext* ctx, AgentStream* stream) {
  if (grpc::Status a = auth_->Check(ctx); !a.ok()) return a;
  v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  auto session = std::make_shared<AgentSession>(first.register_().host(), stream, ctx,
                                                AddressOfPeer(ctx->peer()));
  // The session's writer must be done before this handler returns (the stream dies with it).
  auto finish = [&](absl::Status s) {
    session->Close();
    session->Join();
    return ToGrpcStatus(s);
  };
  absl::StatusOr<std::unique_ptr<AgentProtocol>> conn = cluster_->OpenAgent(session, first);
  if (!conn.ok()) return finish(conn.status());
  v1::AgentMessage msg;
  absl::Status status;
  while (status.ok() && stream->Read(&msg)) status = (*conn)->OnMessage(msg);
  (*conn)->Close();
  return finish(status);
}

}  // namespace paceline::api
