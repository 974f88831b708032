#pragma once
// PostgresServer: a real, throw-away PostgreSQL server for tests. Start() runs `initdb` in a
// fresh temporary directory and starts `postgres` on 127.0.0.1 only, on a free port, with its
// unix socket in that directory, as the unprivileged `postgres` user when the caller is root
// (PostgreSQL refuses to run as root). The superuser is `paceline` with trust authentication
// on loopback, and a database `paceline` exists. The server is our child; Stop() ends it by PID
// (SIGINT: fast shutdown) and the destructor stops it and removes the directory.
//
// The binaries come from Debian's postgresql-15 (scripts/install-deps.sh); a missing install
// is an error that says so.
//
// Thread-safety: one thread drives a server; url() may be read from any thread.

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paceline::store::testing {

struct PostgresServerOptions {
  // Tests: off, for speed. Benchmarks of durable commits: on.
  bool fsync = false;
};

class PostgresServer {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(PostgresServerOptions o = {});
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // "postgres://paceline@127.0.0.1:PORT/paceline", and the same for another database.
  std::string url() const { return url_for("paceline"); }
  std::string url_for(const std::string& database) const;
  // Creates an empty database (a test's own).
  absl::Status CreateDatabase(const std::string& name);
  // Fast shutdown (SIGINT to the postmaster), waiting for it to exit (SIGKILL after 30 s).
  absl::Status Stop();
  // Starts the server again on the same directory and port (after Stop()).
  absl::Status StartAgain();

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  PostgresServer(std::string bin, std::string dir, int port, PostgresServerOptions o)
      : bin_(std::move(bin)), dir_(std::move(dir)), port_(port), options_(o) {}
  // Runs `postgres` and waits until it accepts connections.
  absl::Status Launch();

  std::string bin_;  // the directory of initdb, postgres
  std::string dir_;  // data/, the socket, server.log
  int port_;
  PostgresServerOptions options_;
  pid_t pid_ = -1;
};

}  // namespace paceline::store::testing
