#include "api/cluster_service.h"

#include "common/version.h"

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

}  // namespace paceline::api
