#include "store/testing/postgres_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status.h"

namespace paceline::store::testing {
namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kStopTimeout = absl::Seconds(30);
constexpr absl::Duration kInitdbTimeout = absl::Seconds(120);
constexpr int kPortAttempts = 3;  // another process may take the free port before postgres

// The uid/gid to run the server as: `postgres` when we are root, ourselves otherwise.
struct RunAs {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

absl::StatusOr<RunAs> ServerUser() {
  if (::geteuid() != 0) return RunAs{};
  struct passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) {
    return absl::FailedPreconditionError(
        "running as root, but there is no `postgres` user to run PostgreSQL as; run "
        "scripts/install-deps.sh");
  }
  return RunAs{true, pw->pw_uid, pw->pw_gid};
}

bool HasServer(const fs::path& bin) {
  return ::access((bin / "postgres").c_str(), X_OK) == 0 &&
         ::access((bin / "initdb").c_str(), X_OK) == 0;
}

// `pg_config --bindir`, or "" when there is no pg_config.
std::string PgConfigBinDir() {
  FILE* p = ::popen("pg_config --bindir 2>/dev/null", "r");
  if (p == nullptr) return "";
  char buf[512] = {0};
  std::string out = ::fgets(buf, sizeof(buf), p) != nullptr ? buf : "";
  ::pclose(p);
  return std::string(absl::StripAsciiWhitespace(out));
}

// /usr/lib/postgresql/15/bin, else pg_config's, else the newest /usr/lib/postgresql/*/bin.
absl::StatusOr<std::string> FindBinDir() {
  const fs::path root = "/usr/lib/postgresql";
  if (HasServer(root / "15" / "bin")) return (root / "15" / "bin").string();
  if (std::string bin = PgConfigBinDir(); !bin.empty() && HasServer(bin)) return bin;
  int best = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    int version = 0;
    if (absl::SimpleAtoi(e.path().filename().string(), &version) && version > best &&
        HasServer(e.path() / "bin")) {
      best = version;
    }
  }
  if (best < 0) {
    return absl::FailedPreconditionError(
        "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres and initdb, and "
        "no pg_config); run scripts/install-deps.sh");
  }
  return (root / absl::StrCat(best) / "bin").string();
}

absl::StatusOr<int> FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  if (port <= 0) return absl::UnavailableError("no free port on 127.0.0.1");
  return port;
}

// The directory to make ours in: $TMPDIR, unless that would make the unix socket's path
// (DIR/pl-pg-XXXXXX/.s.PGSQL.PORT) longer than the 107 bytes a socket address holds.
std::string TempRoot() {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  return ec || tmp.string().size() > 70 ? "/tmp" : tmp.string();
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

// Forks and execs `argv` as `as`, stdin from /dev/null, output appended to `log`. The child
// gets default signal dispositions and an empty mask, none of our descriptors, its own
// process group (a Ctrl-C of the test reaches only the test), and dies with us.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const RunAs& as,
                            const std::string& log) {
  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  static constexpr char kExecFailed[] = "paceline: exec of a PostgreSQL binary failed\n";
  static constexpr char kDropFailed[] = "paceline: cannot switch to the postgres user\n";
  pid_t pid = ::fork();
  if (pid < 0) return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid != 0) return pid;

  // The child.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // SIG_IGN survives exec
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) ::dup2(in, 0);
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out >= 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
  }
  ::close_range(3, ~0U, 0);  // e.g. the test's listening sockets, which would outlive it
  if (as.drop && (::setgroups(1, &as.gid) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0)) {
    (void)!::write(2, kDropFailed, sizeof(kDropFailed) - 1);
    ::_exit(126);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after setuid, which clears it
  if (::getppid() != parent) ::_exit(125);
  ::execv(args[0], args.data());
  (void)!::write(2, kExecFailed, sizeof(kExecFailed) - 1);
  ::_exit(127);
}

// Waits up to `timeout` for our child `pid` to exit; its wait status, or nullopt on timeout.
std::optional<int> WaitExit(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;  // not ours to wait for any more: gone
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(PostgresServerOptions o) {
  ASSIGN_OR_RETURN(std::string bin, FindBinDir());
  ASSIGN_OR_RETURN(RunAs as, ServerUser());
  std::string dir = TempRoot() + "/pl-pg-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("mkdtemp ", dir, ": ", std::strerror(errno)));
  }
  // From here on the destructor removes the directory, whatever fails.
  std::unique_ptr<PostgresServer> server(new PostgresServer(bin, dir, 0, std::move(o)));
  if (as.drop && ::chown(dir.c_str(), as.uid, as.gid) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot give ", dir, " to the postgres user"));
  }
  std::string log = dir + "/initdb.log";
  ASSIGN_OR_RETURN(pid_t initdb, Spawn({bin + "/initdb", "-D", dir + "/data", "-U", "paceline",
                                        "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"},
                                       as, log));
  std::optional<int> status = WaitExit(initdb, kInitdbTimeout);
  if (!status.has_value()) {
    ::kill(initdb, SIGKILL);
    WaitExit(initdb, absl::Seconds(10));
    return absl::DeadlineExceededError(absl::StrCat("initdb did not finish: ", Tail(log)));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::UnavailableError(absl::StrCat("initdb failed: ", Tail(log)));
  }
  if (!server->options_.also_listen.empty()) {
    std::ofstream hba(dir + "/data/pg_hba.conf", std::ios::app);
    hba << "host all all " << server->options_.also_listen << "/32 trust\n";
    if (!hba) return absl::UnavailableError("cannot write pg_hba.conf");
  }
  absl::Status launched;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    ASSIGN_OR_RETURN(server->port_, FreePort());
    launched = server->Launch();
    if (launched.ok() || !absl::StrContains(launched.message(), "could not bind")) break;
  }
  RETURN_IF_ERROR(launched);
  if (server->options_.database != "postgres") {
    RETURN_IF_ERROR(server->CreateDatabase(server->options_.database));
  }
  return server;
}

PostgresServer::~PostgresServer() {
  (void)Stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PostgresServer::url_for(const std::string& database) const {
  return absl::StrCat("postgres://paceline@127.0.0.1:", port_, "/", database);
}

absl::Status PostgresServer::Launch() {
  ASSIGN_OR_RETURN(RunAs as, ServerUser());
  const char* on_off = options_.fsync ? "on" : "off";
  std::string log = dir_ + "/server.log";
  ASSIGN_OR_RETURN(
      pid_, Spawn({bin_ + "/postgres", "-D", dir_ + "/data", "-h",
                   options_.also_listen.empty() ? std::string("127.0.0.1")
                                                : absl::StrCat("127.0.0.1,", options_.also_listen),
                   "-p", absl::StrCat(port_), "-k", dir_, "-c", absl::StrCat("fsync=", on_off),
                   "-c", absl::StrCat("synchronous_commit=", on_off), "-c",
                   absl::StrCat("full_page_writes=", on_off), "-c", "shared_buffers=32MB", "-c",
                   "max_connections=100"},
                  as, log));
  std::string ping = absl::StrCat("host=127.0.0.1 port=", port_,
                                  " user=paceline dbname=postgres connect_timeout=2");
  absl::Time deadline = absl::Now() + kStartTimeout;
  while (PQping(ping.c_str()) != PQPING_OK) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(absl::StrCat("postgres exited at start: ", Tail(log)));
    }
    if (absl::Now() >= deadline) {
      (void)Stop();
      return absl::DeadlineExceededError(
          absl::StrCat("postgres did not accept connections in 30 s: ", Tail(log)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

absl::Status PostgresServer::CreateDatabase(const std::string& name) {
  PGconn* c = PQconnectdb(absl::StrCat(url_for("postgres"), "?connect_timeout=10").c_str());
  absl::Status s;
  if (PQstatus(c) != CONNECTION_OK) {
    s = absl::UnavailableError(absl::StrCat("cannot connect: ", PQerrorMessage(c)));
  } else if (char* quoted = PQescapeIdentifier(c, name.c_str(), name.size()); !quoted) {
    s = absl::InvalidArgumentError(absl::StrCat("database name ", name, ": ", PQerrorMessage(c)));
  } else {
    PGresult* r = PQexec(c, absl::StrCat("CREATE DATABASE ", quoted).c_str());
    PQfreemem(quoted);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      s = absl::InternalError(absl::StrCat("CREATE DATABASE ", name, ": ", PQerrorMessage(c)));
    }
    PQclear(r);
  }
  PQfinish(c);
  return s;
}

absl::Status PostgresServer::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  ::kill(pid_, SIGINT);
  bool exited = WaitExit(pid_, kStopTimeout).has_value();
  if (!exited) {
    ::kill(pid_, SIGKILL);
    WaitExit(pid_, absl::Seconds(10));
  }
  pid_ = -1;
  return exited ? absl::OkStatus()
                : absl::DeadlineExceededError("postgres did not stop in 30 s; killed it");
}

absl::Status PostgresServer::StartAgain() {
  if (pid_ > 0) return absl::FailedPreconditionError("the server is running");
  return Launch();
}

}  // namespace paceline::store::testing
