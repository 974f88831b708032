#pragma once
// HostServiceImpl (host inventory for the CLI and UI) and AgentServiceImpl (the stream each
// agent keeps open: register, heartbeats, status updates in; launches, kills and acks out).
// AgentServiceImpl is only the gRPC transport: the protocol is master::AgentConnection's.
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include <atomic>

#include "api/auth.h"
#include "master/agent_session.h"
#include "master/cluster.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::api {

class HostServiceImpl final : public v1::HostService::Service {
 public:
  HostServiceImpl(master::Cluster* cluster, const TokenAuth* auth)
      : cluster_(cluster), auth_(auth) {}
  grpc::Status ListHosts(grpc::ServerContext* ctx, const v1::ListHostsRequest* req,
                         v1::ListHostsResponse* resp) override;
  grpc::Status DrainHost(grpc::ServerContext* ctx, const v1::HostMaintenanceRequest* req,
                         v1::HostMaintenanceResponse* resp) override;
  grpc::Status DownHost(grpc::ServerContext* ctx, const v1::HostMaintenanceRequest* req,
                        v1::HostMaintenanceResponse* resp) override;
  grpc::Status UpHost(grpc::ServerContext* ctx, const v1::HostMaintenanceRequest* req,
                      v1::HostMaintenanceResponse* resp) override;

 private:
  grpc::Status Maintain(grpc::ServerContext* ctx, const std::string& host,
                        records::HostMaintenance next, v1::HostMaintenanceResponse* resp);

  master::Cluster* const cluster_;
  const TokenAuth* const auth_;
};

class AgentServiceImpl final : public v1::AgentService::Service {
 public:
  AgentServiceImpl(master::Cluster* cluster, const TokenAuth* auth,
                   absl::Duration heartbeat_interval)
      : cluster_(cluster), auth_(auth), heartbeat_interval_(heartbeat_interval) {}
  grpc::Status Connect(grpc::ServerContext* ctx, master::AgentStream* stream) override;

 private:
  master::Cluster* const cluster_;
  const TokenAuth* const auth_;
  const absl::Duration heartbeat_interval_;
};

}  // namespace paceline::api
