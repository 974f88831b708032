#pragma once
// ClusterServiceImpl: gRPC adapter for paceline.v1.ClusterService: facts about the master
// (GetInfo, open to anyone: the UI and the CLI read it before they have a token) and the
// cluster's recent history (GetHistory, from the core's scheduler::History; needs the token).
//
// Thread-safety: immutable after construction; handlers run on gRPC threads.

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/access_control.h"
#include "api/backend.h"
#include "api/retention_facts.h"
#include "api/usage_source.h"
#include "paceline/v1/cluster.grpc.pb.h"

namespace paceline::api {

// Which part this master plays now (several masters: masterd/leadership.h).
struct MasterRole {
  std::string role = "single";  // "single", "leader", "standby"
  uint64_t term = 0;
  std::string leader;  // the leader's gRPC address, when one leads
  absl::Duration lease_age = absl::InfiniteDuration();
  // A standby: how old its followed copy of the store is (InfiniteDuration: not following).
  absl::Duration replication_lag = absl::InfiniteDuration();
};

// A certificate this master serves with (with TLS: the cluster's CA and the master's own), as
// /metrics shows it: paceline_tls_certificate_not_after_timestamp_seconds{certificate,file}.
struct CertificateExpiry {
  std::string certificate;  // "ca", "master"
  std::string file;
  absl::Time not_after;
};

struct MasterFacts {
  absl::Time started_at;
  std::string store;                          // e.g. "sqlite:data/paceline.db"
  std::string cluster_id;                     // stable id of the cluster's store
  std::function<MasterRole()> role;           // thread-safe; unset: "single"
  std::function<RetentionFacts()> retention;  // thread-safe; unset: no retention worker
  // Usage counters per pool (usage_source.h); thread-safe; unset: none.
  std::function<std::vector<PoolUsageCounter>()> usage;
  // The certificates it serves with, read again at each call; thread-safe; unset: no TLS.
  std::function<std::vector<CertificateExpiry>()> certificates;
};

class ClusterServiceImpl final : public v1::ClusterService::Service {
 public:
  ClusterServiceImpl(MasterFacts facts, Backend* cluster, AccessControl* access)
      : facts_(std::move(facts)), cluster_(cluster), access_(access) {}
  grpc::Status GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest* request,
                       v1::GetInfoResponse* response) override;
  grpc::Status GetHistory(grpc::ServerContext* context, const v1::GetHistoryRequest* request,
                          v1::GetHistoryResponse* response) override;

 private:
  const MasterFacts facts_;
  Backend* const cluster_;
  AccessControl* const access_;
};

}  // namespace paceline::api
