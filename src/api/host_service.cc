#include "api/host_service.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/match.h"
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
  if (grpc::Status a = access_->Check(ctx, {.object = absl::StrCat("host ", host)}); !a.ok()) {
    return a;
  }
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

namespace {

constexpr uint32_t kMaxHostPage = 1000;
constexpr absl::string_view kHostStates[] = {"UP",   "DRAINING", "DRAINED",
                                             "DOWN", "LOST",     "RECONNECTING"};

// The state a host is shown in (see HostInfo.state).
std::string HostStateOf(const SchedulerCore& core, const hostmgr::TrackedHost& h) {
  if (h.reconnecting) return "RECONNECTING";
  if (!h.connected) return "LOST";
  const placement::HostState* state = core.snapshot().host(h.id);
  return state != nullptr ? std::string(placement::HostStatusName(state->status())) : "UP";
}

// Its GPU devices, their health, and the tasks holding part or all of each.
void FillGpus(const SchedulerCore& core, const hostmgr::TrackedHost& h,
              const placement::HostState& state, v1::HostInfo* info) {
  for (size_t i = 0; i < state.gpus().size(); ++i) {
    v1::GpuDevice* d = info->add_gpus();
    d->set_index(static_cast<uint32_t>(i));
    d->set_model(state.gpus()[i].model);
    d->set_milli_allocated(static_cast<uint32_t>(state.gpus()[i].milli_allocated));
  }
  for (const hostmgr::GpuFault& f : h.gpu_faults) {
    if (f.device >= static_cast<uint32_t>(info->gpus_size())) continue;
    v1::GpuFault* fault = info->mutable_gpus(static_cast<int>(f.device))->mutable_fault();
    fault->set_device(f.device);
    fault->set_reason(f.reason);
    fault->set_since_unix_ms(wire::ToUnixMillis(f.since));
  }
  if (state.gpus().empty()) return;
  for (const TaskId& t : state.tasks()) {
    const placement::Usage* u = core.snapshot().TaskUsage(t);
    if (u == nullptr) continue;
    for (const placement::GpuShare& share : u->gpus()) {
      if (share.device >= info->gpus_size()) continue;
      v1::GpuHolder* holder = info->mutable_gpus(share.device)->add_holders();
      holder->set_job_id(t.job.value());
      holder->set_instance(t.instance);
      holder->set_milli(static_cast<uint32_t>(share.milli));
    }
  }
}

void FillHost(const SchedulerCore& core, const hostmgr::TrackedHost& h, std::string state_name,
              absl::Time now, v1::HostInfo* info) {
  info->set_name(h.spec.name);
  info->set_state(std::move(state_name));
  info->set_connected(h.connected);
  info->set_last_seen_unix_ms(wire::ToUnixMillis(h.last_seen));
  *info->mutable_capacity() = wire::ToProto(h.spec.capacity);
  for (const auto& [k, v] : h.spec.labels) (*info->mutable_labels())[k] = v;
  if (const placement::HostState* state = core.snapshot().host(h.id)) {
    *info->mutable_allocated() = wire::ToProto(state->allocated());
    *info->mutable_revocable_allocated() = wire::ToProto(state->revocable_allocated());
    *info->mutable_slack() = wire::ToProto(state->effective_slack());
    info->set_tasks(static_cast<uint32_t>(state->tasks().size()));
    FillGpus(core, h, *state, info);
  }
  const hostmgr::AgentFacts& agent = core.hosts().agent_facts(h.id);
  info->set_isolation(agent.isolation);
  info->set_agent_version(agent.version);
  info->set_agent_commit(agent.commit);
  info->set_maintenance(std::string(MaintenanceName(h.maintenance)));
  for (const scheduler::HostImage& img : core.agents().HostImages(h.spec.name)) {
    v1::HostImage* out = info->add_images();
    out->set_config_digest(img.config_digest);
    for (const std::string& ref : img.refs) out->add_refs(ref);
    out->set_size_bytes(img.size_bytes);
    out->set_last_used_unix_ms(wire::ToUnixMillis(img.last_used));
    out->set_tasks(img.tasks);
  }
  if (std::optional<scheduler::HostUsageView> u = core.agents().HostUsage(h.spec.name, now)) {
    *info->mutable_used() = wire::ToProto(u->used);
    *info->mutable_tasks_used() = wire::ToProto(u->tasks_used);
    info->set_memory_total_bytes(u->memory_total_bytes);
    info->set_usage_at_unix_ms(wire::ToUnixMillis(u->at));
  }
}

}  // namespace

grpc::Status HostServiceImpl::ListHosts(grpc::ServerContext* ctx, const v1::ListHostsRequest* req,
                                        v1::ListHostsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
  if (req->page_size() > kMaxHostPage) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("page_size: ", req->page_size(), " is above the maximum of ", kMaxHostPage)));
  }
  if (!req->state().empty() && std::find(std::begin(kHostStates), std::end(kHostStates),
                                         req->state()) == std::end(kHostStates)) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("state: unknown host state '", req->state(),
                     "'; expected UP, DRAINING, DRAINED, DOWN, LOST or RECONNECTING")));
  }
  const absl::Time now = absl::Now();
  cluster_->Read<bool>([&](const SchedulerCore& core) {
    struct Match {
      const hostmgr::TrackedHost* host;
      std::string state;
    };
    std::vector<Match> matching;
    for (const hostmgr::TrackedHost& h : core.hosts().all()) {
      std::string state = HostStateOf(core, h);
      ++(*resp->mutable_states())[state];
      if (!req->state().empty() && state != req->state()) continue;
      if (!absl::StrContains(h.spec.name, req->name_contains())) continue;
      matching.push_back({&h, std::move(state)});
    }
    std::sort(matching.begin(), matching.end(),
              [](const Match& a, const Match& b) { return a.host->spec.name < b.host->spec.name; });
    resp->set_matching(static_cast<uint32_t>(matching.size()));
    // The token is the last name of the previous page: this page starts after it.
    auto first = req->page_token().empty()
                     ? matching.begin()
                     : std::upper_bound(matching.begin(), matching.end(), req->page_token(),
                                        [](const std::string& token, const Match& m) {
                                          return token < m.host->spec.name;
                                        });
    resp->set_offset(static_cast<uint32_t>(first - matching.begin()));
    const size_t left = static_cast<size_t>(matching.end() - first);
    const size_t n = req->page_size() == 0 ? left : std::min<size_t>(left, req->page_size());
    for (auto it = first; it != first + static_cast<ptrdiff_t>(n); ++it) {
      FillHost(core, *it->host, std::move(it->state), now, resp->add_hosts());
    }
    if (n < left) resp->set_next_page_token(resp->hosts(resp->hosts_size() - 1).name());
    return true;
  });
  // Off the loop: the agents' connections are the registry's, not the core's.
  if (address_of_) {
    for (v1::HostInfo& h : *resp->mutable_hosts()) h.set_address(address_of_(h.name()));
  }
  return grpc::Status::OK;
}

}  // namespace paceline::api
