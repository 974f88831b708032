#pragma once
// Master: the Paceline control-plane process — the store, the gRPC API and the HTTP side.
//
// Start() opens the store under config.data_dir, starts the gRPC server and the HTTP server on
// their listen addresses (port 0 = any free port), and writes <data_dir>/master.json with the
// bound addresses and the pid, so that the CLI and tests can find a master started with port 0.
// Shutdown() stops both servers (in-flight requests finish) and removes master.json; it is
// idempotent and is also called by the destructor.
//
// Thread-safety: Start/Shutdown from one thread (the daemon's main thread).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/net.h"

namespace paceline::master {

struct MasterConfig {
  std::string data_dir = "data";
  HostPort grpc_listen{"127.0.0.1", 5390};
  HostPort http_listen{"127.0.0.1", 5391};
};

// What <data_dir>/master.json says.
struct MasterEndpoints {
  std::string grpc;  // host:port
  std::string http;  // host:port
  int pid = 0;
};

class Master {
 public:
  static absl::StatusOr<std::unique_ptr<Master>> Start(const MasterConfig& config);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  void Shutdown();
  const MasterEndpoints& endpoints() const { return endpoints_; }

 private:
  struct Impl;
  explicit Master(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  MasterEndpoints endpoints_;
};

// Reads <data_dir>/master.json; NOT_FOUND when no master wrote one.
absl::StatusOr<MasterEndpoints> ReadEndpointsFile(const std::string& data_dir);

}  // namespace paceline::master
