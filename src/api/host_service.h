#pragma once
// HostServiceImpl (host inventory for the CLI and UI) and AgentServiceImpl (the stream each
// agent keeps open: register, heartbeats, status updates in; launches, kills and acks out).
// AgentServiceImpl is only the gRPC transport: the protocol is the Backend's
// (masterd::AgentConnection).
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "api/access_control.h"
#include "api/agent_session.h"
#include "api/backend.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::api {

class HostServiceImpl final : public v1::HostService::Service {
 public:
  // The IP address of a host's connected agent ("" when none is); null: addresses are not shown.
  // Called off the loop, once per listed host.
  using AddressOf = std::function<std::string(const std::string& host)>;
  HostServiceImpl(Backend* cluster, AccessControl* access, AddressOf address_of = nullptr)
      : cluster_(cluster), access_(access), address_of_(std::move(address_of)) {}
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

  Backend* const cluster_;
  AccessControl* const access_;
  const AddressOf address_of_;
};

// On gRPC's callback API: a stream holds no thread (agent_session.h).
class AgentServiceImpl final : public v1::AgentService::CallbackService {
 public:
  AgentServiceImpl(Backend* cluster, AccessControl* access) : cluster_(cluster), access_(access) {}
  AgentReactor* Connect(grpc::CallbackServerContext* ctx) override {
    return NewAgentStream(ctx, cluster_, access_);
  }

 private:
  Backend* const cluster_;
  AccessControl* const access_;
};

}  // namespace paceline::api
