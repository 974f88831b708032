#include "agent/health/health_probe.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paceline::agent {
namespace {

// Connects to 127.0.0.1:port without blocking. HTTP mode then sends a GET and reads the status.
class SocketProbe final : public HealthProbe {
 public:
  SocketProbe(uint16_t port, std::optional<std::string> http_path)
      : port_(port), http_path_(std::move(http_path)) {}

  std::optional<bool> Start() override {
    Abort();
    fd_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd_.valid()) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    if (rc != 0 && errno != EINPROGRESS) return Finish(false);
    stage_ = kConnecting;
    events_ = EPOLLOUT;
    return std::nullopt;
  }
  int fd() const override { return fd_.get(); }
  uint32_t events() const override { return events_; }

  std::optional<bool> OnReady(uint32_t) override {
    if (stage_ == kConnecting) {
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        return Finish(false);
      }
      if (!http_path_) return Finish(true);
      std::string req = absl::StrCat("GET ", *http_path_,
                                     " HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: "
                                     "paceline-health\r\nConnection: close\r\n\r\n");
      if (::send(fd_.get(), req.data(), req.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(req.size())) {
        return Finish(false);
      }
      stage_ = kReading;
      events_ = EPOLLIN;
      return std::nullopt;
    }
    char buf[512];
    ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::nullopt;
    if (n <= 0) return Finish(false);
    response_.append(buf, static_cast<size_t>(n));
    size_t eol = response_.find("\r\n");
    if (eol == std::string::npos) {
      if (response_.size() > 4096) return Finish(false);
      return std::nullopt;
    }
    // "HTTP/1.1 200 OK"
    std::string line = response_.substr(0, eol);
    int code = 0;
    size_t sp = line.find(' ');
    bool ok = line.rfind("HTTP/", 0) == 0 && sp != std::string::npos &&
              absl::SimpleAtoi(line.substr(sp + 1, 3), &code) && code >= 200 && code < 400;
    return Finish(ok);
  }

  void Abort() override {
    fd_.Reset();
    response_.clear();
    stage_ = kIdle;
  }

 private:
  enum Stage { kIdle, kConnecting, kReading };
  bool Finish(bool ok) {
    Abort();
    return ok;
  }

  uint16_t port_;
  std::optional<std::string> http_path_;
  UniqueFd fd_;
  Stage stage_ = kIdle;
  uint32_t events_ = 0;
  std::string response_;
};

class CommandProbe final : public HealthProbe {
 public:
  explicit CommandProbe(WrapperArgs args) : args_(std::move(args)) { args_.exec_mode = true; }
  ~CommandProbe() override { Abort(); }

  std::optional<bool> Start() override {
    Abort();
    absl::StatusOr<SpawnedWrapper> w = SpawnWrapper(args_);
    if (!w.ok()) return false;
    pid_ = w->pid;
    pidfd_ = std::move(w->pidfd);
    return std::nullopt;
  }
  int fd() const override { return pidfd_.get(); }
  uint32_t events() const override { return EPOLLIN; }

  std::optional<bool> OnReady(uint32_t) override {
    int ws = 0;
    pid_t r = ::waitpid(pid_, &ws, WNOHANG);
    if (r == 0) return std::nullopt;
    pid_ = 0;
    pidfd_.Reset();
    return r > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
  }

  void Abort() override {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);  // the command leads its own process group
      ::kill(pid_, SIGKILL);
      int ws = 0;
      // SIGKILL cannot be ignored; the wait is short (a process stuck in D state is the rare
      // exception, and then so is everything else on the host).
      while (::waitpid(pid_, &ws, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = 0;
    pidfd_.Reset();
  }

 private:
  WrapperArgs args_;
  pid_t pid_ = 0;
  UniqueFd pidfd_;
};

}  // namespace

std::unique_ptr<HealthProbe> MakeTcpProbe(uint16_t port) {
  return std::make_unique<SocketProbe>(port, std::nullopt);
}
std::unique_ptr<HealthProbe> MakeHttpProbe(uint16_t port, std::string path) {
  if (path.empty() || path[0] != '/') path = "/" + path;
  return std::make_unique<SocketProbe>(port, std::move(path));
}
std::unique_ptr<HealthProbe> MakeCommandProbe(WrapperArgs args) {
  return std::make_unique<CommandProbe>(std::move(args));
}

}  // namespace paceline::agent
