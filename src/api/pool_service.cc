#include "api/pool_service.h"

#include "absl/strings/str_cat.h"
#include "api/grpc_status.h"
#include "spec/yaml_spec.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"

namespace paceline::api {
namespace {

std::string SpecName(const std::string& given) { return given.empty() ? "request" : given; }

v1::PoolInfo InfoOf(const scheduler::SchedulerCore& core, PoolId id) {
  const resmgr::PoolTree& tree = core.resources().tree();
  v1::PoolInfo info;
  info.set_path(tree.path(id));
  info.set_spec_yaml(PrintPoolSpec(tree.spec(id)));
  info.set_leaf(tree.children(id).empty());
  absl::StatusOr<resmgr::PoolStats> stats = core.resources().Stats(id);
  const std::optional<resmgr::FairShareView> fair = core.resources().fair_share().View(tree, id);
  if (fair.has_value()) {
    v1::PoolFairShare* f = info.mutable_fair_share();
    f->set_decayed_usage(fair->decayed_usage);
    f->set_usage_fraction(fair->usage_fraction);
    f->set_half_life_ms(absl::ToInt64Milliseconds(fair->half_life));
  }
  for (Dim d : kAllDims) {
    v1::PoolDimension* dim = info.add_dimensions();
    dim->set_name(std::string(DimName(d)));
    const DimSpec& spec = tree.spec(id).dim(d);
    dim->set_reservation(spec.reservation);
    dim->set_limit(spec.limit);
    dim->set_share(spec.share);
    dim->set_fair_share_factor(fair.has_value() ? fair->factor[static_cast<int>(d)] : 1.0);
    if (stats.ok()) {
      dim->set_entitlement(stats->entitlement[d]);
      dim->set_allocation(stats->allocation[d]);
      dim->set_demand(stats->demand[d]);
    }
  }
  if (stats.ok()) {
    info.set_queued_gangs(stats->queued_gangs);
    info.set_admitted_gangs(stats->admitted_gangs);
  }
  return info;
}

void AddDepthFirst(const scheduler::SchedulerCore& core, PoolId id, v1::ListPoolsResponse* out) {
  *out->add_pools() = InfoOf(core, id);
  for (PoolId child : core.resources().tree().children(id)) AddDepthFirst(core, child, out);
}

access::Target PoolTarget(const std::string& path) {
  return {.pool = path, .object = absl::StrCat("pool ", path)};
}

}  // namespace

grpc::Status PoolServiceImpl::CreatePool(grpc::ServerContext* ctx, const v1::CreatePoolRequest* req,
                                         v1::CreatePoolResponse*) {
  if (grpc::Status a = access_->Check(ctx, PoolTarget(req->path())); !a.ok()) return a;
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec(req->spec_yaml(), SpecName(req->spec_name()));
  if (!spec.ok()) return ToGrpcStatus(spec.status());
  return ToGrpcStatus(
      cluster_->Mutate([&](scheduler::SchedulerCore& core, absl::Time, scheduler::Actions& out) {
        return core.pools().CreatePool(req->path(), *spec, out);
      }));
}

grpc::Status PoolServiceImpl::GetPool(grpc::ServerContext* ctx, const v1::GetPoolRequest* req,
                                      v1::GetPoolResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, PoolTarget(req->path())); !a.ok()) return a;
  return ToGrpcStatus(cluster_->Read<absl::Status>([&](const scheduler::SchedulerCore& core) {
    absl::StatusOr<PoolId> id = core.resources().tree().Lookup(req->path());
    if (!id.ok()) return id.status();
    *resp->mutable_pool() = InfoOf(core, *id);
    absl::StatusOr<std::vector<resmgr::QueuedGangView>> queue = core.resources().Queue(*id);
    if (queue.ok()) {
      for (const resmgr::QueuedGangView& g : *queue) {
        v1::QueuedGang* q = resp->add_queue();
        q->set_position(g.position);
        q->set_job_id(g.job.value());
        q->set_priority(g.priority);
        q->set_sla(std::string(resmgr::SlaClassName(g.sla)));
        q->set_tasks(g.tasks);
        *q->mutable_resources() = wire::ToProto(g.resources);
        q->set_enqueued_at_unix_ms(wire::ToUnixMillis(g.enqueued));
        q->set_reason(g.why);
      }
    }
    return absl::OkStatus();
  }));
}

grpc::Status PoolServiceImpl::UpdatePool(grpc::ServerContext* ctx, const v1::UpdatePoolRequest* req,
                                         v1::UpdatePoolResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, PoolTarget(req->path())); !a.ok()) return a;
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec(req->spec_yaml(), SpecName(req->spec_name()));
  if (!spec.ok()) return ToGrpcStatus(spec.status());
  return ToGrpcStatus(cluster_->Mutate(
      [&](scheduler::SchedulerCore& core, absl::Time, scheduler::Actions& out) -> absl::Status {
        absl::StatusOr<std::vector<std::string>> broke =
            core.pools().UpdatePool(req->path(), *spec, req->force(), out);
        if (!broke.ok()) return broke.status();
        for (const std::string& b : *broke) resp->add_broke(b);
        return absl::OkStatus();
      }));
}

grpc::Status PoolServiceImpl::DeletePool(grpc::ServerContext* ctx, const v1::DeletePoolRequest* req,
                                         v1::DeletePoolResponse*) {
  if (grpc::Status a = access_->Check(ctx, PoolTarget(req->path())); !a.ok()) return a;
  if (secrets_ != nullptr) {
    std::vector<records::SecretRecord> held = secrets_->List(req->path(), false);
    if (!held.empty()) {
      return ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
          "pool ", req->path(), " holds ", held.size(), held.size() == 1 ? " secret" : " secrets",
          " (the first: ", held.front().path, "); delete them first: paceline secret delete ",
          held.front().path)));
    }
  }
  return ToGrpcStatus(
      cluster_->Mutate([&](scheduler::SchedulerCore& core, absl::Time, scheduler::Actions& out) {
        return core.pools().DeletePool(req->path(), out);
      }));
}

grpc::Status PoolServiceImpl::ListPools(grpc::ServerContext* ctx, const v1::ListPoolsRequest*,
                                        v1::ListPoolsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
  cluster_->Read<bool>([&](const scheduler::SchedulerCore& core) {
    std::optional<PoolId> root = core.resources().tree().Find("/");
    if (root) AddDepthFirst(core, *root, resp);
    return true;
  });
  return grpc::Status::OK;
}

}  // namespace paceline::api
