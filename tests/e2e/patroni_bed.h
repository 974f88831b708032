#pragma once
// PatroniBed: PostgreSQL replicated by Patroni over etcd for a test, started with
// scripts/patroni-up.sh (the same script an operator runs to try it, and scripts/ha-up.sh's
// PATRONI mode): three etcd members and `nodes` PostgreSQL servers, one primary and synchronous
// standbys in strict synchronous mode, on free ports of 127.0.0.1 (and of the other loopback
// addresses in `addresses`, which a test may cut off), under `dir`.
//
// Start() waits until the cluster serves (at most 120 s). The destructor stops the script with
// SIGTERM, which stops every process it started by PID, waits for it and removes `dir`.
//
// Thread-safety: single-threaded test code.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/e2e/process.h"

namespace paceline::e2e {

struct PatroniBedOptions {
  int nodes = 2;
  std::string addresses = "127.0.0.1";  // where PostgreSQL listens: the script's ADDRESSES
};

class PatroniBed {
 public:
  static absl::StatusOr<std::unique_ptr<PatroniBed>> Start(const std::string& dir,
                                                           PatroniBedOptions options = {});
  ~PatroniBed();
  PatroniBed(const PatroniBed&) = delete;
  PatroniBed& operator=(const PatroniBed&) = delete;

  // The masters' --store: every node, libpq picking the one that accepts writes.
  const std::string& store() const { return store_; }
  int nodes() const { return static_cast<int>(nodes_.size()); }
  // The node Patroni's REST API says is the primary now; -1 when none is.
  int Primary() const;
  // Node i's postmaster PID (its postmaster.pid); -1 when it is not running.
  pid_t PostmasterPid(int node) const;
  pid_t etcd_pid(int member) const { return etcd_pids_[member]; }
  // The last lines of the Patroni logs, for a failing test.
  std::string LogTails() const;

 private:
  struct Node {
    std::string api;   // http://HOST:PORT of its Patroni
    std::string data;  // its data directory
    std::string log;
  };
  PatroniBed(std::string dir, Process script) : dir_(std::move(dir)), script_(std::move(script)) {}
  int Status(int node, const std::string& path) const;

  std::string dir_;
  Process script_;
  std::string store_;
  std::vector<Node> nodes_;
  std::vector<pid_t> etcd_pids_;
};

}  // namespace paceline::e2e
