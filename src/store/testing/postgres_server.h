#pragma once
// PostgresServer: a real, throw-away PostgreSQL server for tests and benchmarks.
//
// Start() runs `initdb` in a fresh temporary directory and starts `postgres` listening on
// 127.0.0.1 only, on a free TCP port, with its unix socket and its log (server.log) in that
// directory. The superuser is `paceline`, with trust authentication; the database named in the
// options exists. When the caller is root the server runs as the unprivileged `postgres` user
// (PostgreSQL refuses to run as root), which then owns the directory. Start() waits until the
// server accepts connections (at most 30 s); a failed start returns an error with the tail of
// the server's log.
//
// The server is our child process: Stop() ends it by PID (SIGINT, PostgreSQL's fast shutdown;
// SIGKILL after 30 s) and StartAgain() starts it again on the same directory and port, data
// kept. The destructor stops it and removes the directory. If the test process dies first, the
// server is killed with it (PR_SET_PDEATHSIG, which fires when the *thread* that started it
// exits: call Start() and StartAgain() from a thread that outlives the server, such as the
// test's main thread); its directory is then left behind in the temporary directory.
//
// The binaries are PostgreSQL's (Debian's postgresql-15, see scripts/install-deps.sh), found
// under /usr/lib/postgresql/*/bin (15 preferred) or by `pg_config --bindir`; a missing install
// is a FailedPrecondition error that says how to install it.
//
// Thread-safety: one thread drives a server (Start, Stop, StartAgain, CreateDatabase, the
// destructor); url(), url_for(), port() and dir() do not change after Start() and may be read
// from any thread.

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paceline::store::testing {

struct PostgresServerOptions {
  // Tests: off (also synchronous_commit and full_page_writes), for speed. Benchmarks of
  // durable commits: on.
  bool fsync = false;
  // The database that Start() creates and url() names.
  std::string database = "paceline";
  // Another loopback address it listens on as well (e.g. "127.0.0.2"), with the same port and
  // trust: a test can cut one client's path (an iptables rule on that address) and not others'.
  std::string also_listen;
};

class PostgresServer {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(PostgresServerOptions o = {});
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // "postgres://paceline@127.0.0.1:PORT/DATABASE": the options' database, or another one.
  std::string url() const { return url_for(options_.database); }
  std::string url_for(const std::string& database) const;
  // Creates an empty database (a test's own); an error if it exists or the server is down.
  absl::Status CreateDatabase(const std::string& name);
  // Fast shutdown (SIGINT to the postmaster), waiting for it to exit (SIGKILL after 30 s, and
  // then a DeadlineExceeded error). OK when it is not running.
  absl::Status Stop();
  // Starts the server again on the same directory and port, data kept (after Stop()).
  absl::Status StartAgain();

  // The postmaster's PID while it runs, -1 after Stop().
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  PostgresServer(std::string bin, std::string dir, int port, PostgresServerOptions o)
      : bin_(std::move(bin)), dir_(std::move(dir)), port_(port), options_(std::move(o)) {}
  // Runs `postgres` and waits until it accepts connections.
  absl::Status Launch();

  std::string bin_;  // the directory of initdb and postgres
  std::string dir_;  // data/, the socket, initdb.log, server.log
  int port_;
  PostgresServerOptions options_;
  pid_t pid_ = -1;
};

}  // namespace paceline::store::testing
