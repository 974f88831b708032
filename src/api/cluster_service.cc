#include "api/cluster_service.h"

#include "common/version.h"
#include "wire/core.h"

namespace paceline::api {

grpc::Status ClusterServiceImpl::GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*,
                                         v1::GetInfoResponse* response) {
  response->set_version(std::string(Version()));
  response->set_commit(std::string(Commit()));
  response->set_started_at_unix_ms(absl::ToUnixMillis(facts_.started_at));
  response->set_store(facts_.store);
  response->set_cluster_id(facts_.cluster_id);
  MasterRole role = facts_.role ? facts_.role() : MasterRole{};
  response->set_role(role.role);
  response->set_term(role.term);
  response->set_leader(role.leader);
  response->set_lease_age_ms(
      role.lease_age == absl::InfiniteDuration() ? -1 : absl::ToInt64Milliseconds(role.lease_age));
  response->set_replication_lag_ms(role.replication_lag == absl::InfiniteDuration()
                                       ? -1
                                       : absl::ToInt64Milliseconds(role.replication_lag));
  return grpc::Status::OK;
}

grpc::Status ClusterServiceImpl::GetHistory(grpc::ServerContext* ctx,
                                            const v1::GetHistoryRequest* req,
                                            v1::GetHistoryResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  cluster_->Read<bool>([&](const scheduler::SchedulerCore& core) {
    const scheduler::History& history = core.history();
    resp->set_period_ms(absl::ToInt64Milliseconds(history.period()));
    for (const scheduler::ClusterPoint& c : history.cluster()) {
      v1::ClusterPoint* p = resp->add_cluster();
      p->set_at_unix_ms(wire::ToUnixMillis(c.at));
      p->set_placed(c.placed);
      p->set_pending_tasks(c.pending);
      p->set_running_tasks(c.running);
      *p->mutable_capacity() = wire::ToProto(c.capacity);
      *p->mutable_allocated() = wire::ToProto(c.allocated);
    }
    if (req->pool().empty()) return true;
    for (const scheduler::PoolPoint& pp : history.pool(req->pool())) {
      v1::PoolPoint* p = resp->add_pool();
      p->set_at_unix_ms(wire::ToUnixMillis(pp.at));
      *p->mutable_entitlement() = wire::ToProto(pp.entitlement);
      *p->mutable_allocation() = wire::ToProto(pp.allocation);
      *p->mutable_demand() = wire::ToProto(pp.demand);
    }
    return true;
  });
  return grpc::Status::OK;
}

}  // namespace paceline::api
