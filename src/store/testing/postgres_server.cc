#include "store/testing/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status.h"

namespace paceline::store::testing {
namespace {

namespace fs = std::filesystem;

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

absl::StatusOr<std::string> FindBinDir() {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (fs::exists(e.path() / "bin" / "postgres")) found.push_back((e.path() / "bin").string());
  }
  if (found.empty()) {
    return absl::FailedPreconditionError(
        "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres); run "
        "scripts/install-deps.sh");
  }
  std::sort(found.begin(), found.end());
  return found.back();
}

absl::StatusOr<int> FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
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

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

// Forks and execs `argv` as `as`, output appended to `log`; the child dies with us.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const RunAs& as,
                            const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return absl::UnavailableError("fork() failed");
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);  // a test's Ctrl-C does not reach it; it is stopped by PID
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (as.drop &&
        (::setgroups(0, nullptr) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0)) {
      ::_exit(126);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after setuid, which clears it
    if (::getppid() != parent) ::_exit(125);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// Waits up to `timeout` for `pid` to exit; true when it did.
bool WaitExit(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || r < 0) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(PostgresServerOptions o) {
  ASSIGN_OR_RETURN(std::string bin, FindBinDir());
  ASSIGN_OR_RETURN(RunAs as, ServerUser());
  std::string templ = (fs::temp_directory_path() / "pl-pg-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return absl::UnavailableError("mkdtemp failed");
  ASSIGN_OR_RETURN(int port, FreePort());
  std::unique_ptr<PostgresServer> server(new PostgresServer(bin, templ, port, o));
  if (as.drop && ::chown(templ.c_str(), as.uid, as.gid) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot give ", templ, " to the postgres user"));
  }
  std::string log = templ + "/initdb.log";
  ASSIGN_OR_RETURN(pid_t initdb, Spawn({bin + "/initdb", "-D", templ + "/data", "-U", "paceline",
                                        "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"},
                                       as, log));
  int status = 0;
  ::waitpid(initdb, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(absl::StrCat("initdb failed: ", Tail(log)));
  }
  RETURN_IF_ERROR(server->Launch());
  RETURN_IF_ERROR(server->CreateDatabase("paceline"));
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
      pid_, Spawn({bin_ + "/postgres", "-D", dir_ + "/data", "-h", "127.0.0.1", "-p",
                   absl::StrCat(port_), "-k", dir_, "-c", absl::StrCat("fsync=", on_off), "-c",
                   absl::StrCat("synchronous_commit=", on_off), "-c",
                   absl::StrCat("full_page_writes=", on_off), "-c", "shared_buffers=32MB", "-c",
                   "max_connections=100"},
                  as, log));
  std::string ping = absl::StrCat("host=127.0.0.1 port=", port_, " user=paceline dbname=postgres");
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (PQping(ping.c_str()) != PQPING_OK) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(absl::StrCat("postgres exited at start: ", Tail(log)));
    }
    if (absl::Now() >= deadline) {
      (void)Stop();
      return absl::UnavailableError(absl::StrCat("postgres did not start in 30 s: ", Tail(log)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::OkStatus();
}

absl::Status PostgresServer::CreateDatabase(const std::string& name) {
  PGconn* c = PQconnectdb(url_for("postgres").c_str());
  absl::Status s;
  if (PQstatus(c) != CONNECTION_OK) {
    s = absl::UnavailableError(absl::StrCat("cannot connect: ", PQerrorMessage(c)));
  } else {
    PGresult* r = PQexec(c, absl::StrCat("CREATE DATABASE \"", name, "\"").c_str());
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
  bool exited = WaitExit(pid_, absl::Seconds(30));
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
