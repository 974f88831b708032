#include "image/testing/registry_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "image/digest.h"

namespace paceline::image::testing {
namespace {

constexpr char kRegistryBinary[] = "/usr/bin/docker-registry";
constexpr char kHtpasswdBinary[] = "/usr/bin/htpasswd";
constexpr int kLaunchAttempts = 5;  // a port found free may be taken before the registry binds

absl::StatusOr<std::string> MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      absl::StrCat(base != nullptr && base[0] != '\0' ? base : "/tmp", "/paceline-registry-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdtemp ", tmpl));
  }
  return tmpl;
}

absl::Status WriteFile(const std::string& path, absl::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A socket bound to 127.0.0.1 on a port the kernel picks; its port in `port`.
absl::StatusOr<int> BindLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    return absl::ErrnoToStatus(err, "bind 127.0.0.1:0");
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

bool Accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Runs argv[0] with `argv`, stdout to `out_path` and stderr too; returns its PID. The child dies
// with the thread that started it.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& out_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env, nullptr};
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", out_path));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(out);
    return absl::ErrnoToStatus(err, "fork");
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(args[0], args.data(), envp);
    ::_exit(127);
  }
  ::close(out);
  return pid;
}

// Waits for `pid` to exit; its exit status (or -1 on a signal).
int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Tail(const std::string& s, size_t n = 2000) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

}  // namespace

bool RegistryServer::HtpasswdAvailable() { return ::access(kHtpasswdBinary, X_OK) == 0; }

absl::StatusOr<std::unique_ptr<RegistryServer>> RegistryServer::Start(Options options) {
  std::unique_ptr<RegistryServer> server(new RegistryServer());
  if (options.hung) {
    int port = 0;
    ASSIGN_OR_RETURN(server->listen_fd_, BindLoopback(&port));
    // Connections complete in the kernel's backlog and are never accepted nor answered.
    if (::listen(server->listen_fd_, 64) != 0) return absl::ErrnoToStatus(errno, "listen");
    server->address_ = absl::StrCat("127.0.0.1:", port);
    return server;
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError("RegistryServer: give both cert_file and key_file, or none");
  }
  if (::access(kRegistryBinary, X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kRegistryBinary, " is missing: apt-get install docker-registry"));
  }
  ASSIGN_OR_RETURN(server->dir_, MakeTempDir());
  server->storage_dir_ = server->dir_ + "/storage";
  RETURN_IF_ERROR(server->Launch(options));
  return server;
}

absl::Status RegistryServer::Launch(const Options& options) {
  std::string config = absl::StrCat(
      "version: 0.1\n"
      "log:\n  level: warn\n  accesslog:\n    disabled: true\n"
      "storage:\n  filesystem:\n    rootdirectory: ",
      storage_dir_, "\n  delete:\n    enabled: true\n");
  if (!options.username.empty()) {
    if (!HtpasswdAvailable()) {
      return absl::FailedPreconditionError(
          absl::StrCat(kHtpasswdBinary, " is missing: apt-get install apache2-utils"));
    }
    std::string htpasswd = dir_ + "/htpasswd";
    ASSIGN_OR_RETURN(
        pid_t pid, Spawn({kHtpasswdBinary, "-Bbn", options.username, options.password}, htpasswd));
    if (Reap(pid) != 0) {
      return absl::InternalError(absl::StrCat("htpasswd failed: ", ReadFileOrEmpty(htpasswd)));
    }
    absl::StrAppend(&config, "auth:\n  htpasswd:\n    realm: paceline-test\n    path: ", htpasswd,
                    "\n");
  }
  const std::string config_path = dir_ + "/config.yml";
  const std::string log_path = dir_ + "/registry.log";
  for (int attempt = 1;; ++attempt) {
    int port = 0;
    ASSIGN_OR_RETURN(int probe, BindLoopback(&port));
    ::close(probe);
    address_ = absl::StrCat("127.0.0.1:", port);
    std::string http = absl::StrCat("http:\n  addr: ", address_, "\n  secret: paceline-test\n");
    if (!options.cert_file.empty()) {
      absl::StrAppend(&http, "  tls:\n    certificate: ", options.cert_file,
                      "\n    key: ", options.key_file, "\n");
    }
    RETURN_IF_ERROR(WriteFile(config_path, config + http));
    ASSIGN_OR_RETURN(pid_, Spawn({kRegistryBinary, "serve", config_path}, log_path));
    // Ready when it accepts connections; gone when it exited (a port taken meanwhile: again).
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        std::string log = ReadFileOrEmpty(log_path);
        if (absl::StrContains(log, "address already in use") && attempt < kLaunchAttempts) break;
        return absl::InternalError(
            absl::StrCat("docker-registry exited (status ", status, "): ", Tail(log)));
      }
      if (Accepts(port)) return absl::OkStatus();
      if (absl::Now() > deadline) {
        Stop();
        return absl::DeadlineExceededError(absl::StrCat("docker-registry did not listen on ",
                                                        address_, " within 30s: ", Tail(Log())));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
}

void RegistryServer::Stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (absl::Now() > deadline) {
        ::kill(pid_, SIGKILL);
        Reap(pid_);
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    pid_ = -1;
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

RegistryServer::~RegistryServer() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string RegistryServer::BlobDataPath(absl::string_view digest) const {
  std::string hex = DigestHex(digest);
  return absl::StrCat(storage_dir_, "/docker/registry/v2/blobs/sha256/", hex.substr(0, 2), "/", hex,
                      "/data");
}

std::string RegistryServer::Log() const {
  return dir_.empty() ? std::string() : ReadFileOrEmpty(dir_ + "/registry.log");
}

}  // namespace paceline::image::testing
