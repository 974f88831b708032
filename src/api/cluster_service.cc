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
  return grpc::Status::OK;
}

}  // namespace paceline::api
