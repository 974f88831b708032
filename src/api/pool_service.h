#pragma once
// PoolServiceImpl: gRPC adapter for paceline.v1.PoolService. Parses specs with the strict YAML
// parser, runs changes through the Cluster (durable before answered), reads from the core;
// GetUsage reads usage accounting from the store (usage_source.h; pool_service_usage.cc).
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include "api/access_control.h"
#include "api/backend.h"
#include "api/secret_records.h"
#include "api/usage_source.h"
#include "paceline/v1/pool.grpc.pb.h"

namespace paceline::api {

class PoolServiceImpl final : public v1::PoolService::Service {
 public:
  // `secrets`: a pool that holds secrets is not deleted (null: none is known). `usage`: where
  // GetUsage reads (null: it answers UNAVAILABLE).
  PoolServiceImpl(Backend* cluster, AccessControl* access, const SecretRecords* secrets,
                  UsageSource* usage = nullptr)
      : cluster_(cluster), access_(access), secrets_(secrets), usage_(usage) {}

  grpc::Status CreatePool(grpc::ServerContext* ctx, const v1::CreatePoolRequest* req,
                          v1::CreatePoolResponse* resp) override;
  grpc::Status GetPool(grpc::ServerContext* ctx, const v1::GetPoolRequest* req,
                       v1::GetPoolResponse* resp) override;
  grpc::Status UpdatePool(grpc::ServerContext* ctx, const v1::UpdatePoolRequest* req,
                          v1::UpdatePoolResponse* resp) override;
  grpc::Status DeletePool(grpc::ServerContext* ctx, const v1::DeletePoolRequest* req,
                          v1::DeletePoolResponse* resp) override;
  grpc::Status ListPools(grpc::ServerContext* ctx, const v1::ListPoolsRequest* req,
                         v1::ListPoolsResponse* resp) override;
  grpc::Status GetUsage(grpc::ServerContext* ctx, const v1::GetUsageRequest* req,
                        v1::GetUsageResponse* resp) override;

 private:
  Backend* const cluster_;
  AccessControl* const access_;
  const SecretRecords* const secrets_;
  UsageSource* const usage_;
};

}  // namespace paceline::api
