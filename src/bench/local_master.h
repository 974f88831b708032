#pragma once
// What the whole-system benchmarks share: a master started in this process on a fresh
// temporary store and free loopback ports, and the few client calls they make with its token.
//
// Thread-safety: LocalMaster from one thread; the helpers are thread-safe.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "masterd/master.h"

namespace paceline::bench {

// A master of this process (SQLite in its data directory, or the configured store) with its data
// directory, removed by Stop() (or the destructor) unless the caller named the directory.
class LocalMaster {
 public:
  // `config.data_dir` empty: a new temporary directory. Ports 0 bind free loopback ports.
  // Plain text (--insecure-loopback): the benchmarks measure the scheduler, not TLS.
  static absl::StatusOr<std::unique_ptr<LocalMaster>> Start(masterd::MasterConfig config);
  ~LocalMaster();

  // Stops the master and starts it again on the same store and the same gRPC port (a
  // restart, as after a crash); returns how long the new master took to be serving (on
  // PostgreSQL: it has taken the lease and rebuilt).
  absl::StatusOr<absl::Duration> Restart();
  void Stop();

  masterd::Master& master() { return *master_; }
  const std::string& addr() const { return master_->endpoints().grpc; }
  const std::string& token() const { return token_; }              // the admin's
  const std::string& agent_token() const { return agent_token_; }  // the agents'
  const std::string& data_dir() const { return config_.data_dir; }

 private:
  // Waits for the master to serve: at once on SQLite, once it leads on PostgreSQL.
  absl::Status WaitServing();

  masterd::MasterConfig config_;
  bool own_dir_ = false;
  std::unique_ptr<masterd::Master> master_;
  std::string token_;
  std::string agent_token_;
};

// A client context with the bearer token, waiting for the connection, with a 30 s deadline.
std::unique_ptr<grpc::ClientContext> ClientContext(const std::string& token);
// Creates the leaf pool `path` with room for any benchmark (ALREADY_EXISTS is fine).
absl::Status CreateBenchPool(const std::string& addr, const std::string& token,
                             const std::string& path);
// A new agent credential for any host (valid a day), made with the admin `token`: for fleets of
// emulated agents, which may not use a client's token.
absl::StatusOr<std::string> CreateAgentToken(const std::string& addr, const std::string& token);
// The p-quantile (0..1) of `v` (reordered); 0 when empty.
double Percentile(std::vector<double>& v, double p);
// This process's resident set size in bytes (VmRSS), 0 if unknown.
int64_t ResidentBytes();
// Where a report was measured: cpus and model, memory, kernel, the build's version and commit,
// and the date (UTC).
nlohmann::json MachineJson();

}  // namespace paceline::bench
