#include "agent/exec/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/launch/wrapper_protocol.h"
#include "common/status.h"

namespace paceline::agent {
namespace {

absl::Status SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return ErrnoStatus(errno, "fcntl O_NONBLOCK");
  }
  return absl::OkStatus();
}

// A pipe, both ends close-on-exec.
absl::Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe2");
  read_end.Reset(p[0]);
  write_end.Reset(p[1]);
  return absl::OkStatus();
}

winsize WinsizeOf(TerminalSize size) {
  winsize ws{};
  ws.ws_row = size.rows == 0 ? 24 : size.rows;
  ws.ws_col = size.cols == 0 ? 80 : size.cols;
  return ws;
}

// One file descriptor passed with SCM_RIGHTS on `sock` (crun's console socket protocol).
absl::StatusOr<int> ReceiveFd(int sock) {
  char data[256];
  iovec iov{data, sizeof(data)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus(errno, "recvmsg on the console socket");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      return fd;
    }
  }
  return absl::UnavailableError(
      "the OCI runtime connected to the console socket but sent no "
      "terminal");
}

}  // namespace

absl::Status ExecProcess::PrepareContainer(const ExecCommand& command) {
  if (!command.process_file.empty()) {
    std::string process = command.process_json;
    if (tty_) {
      nlohmann::json j = nlohmann::json::parse(process, nullptr, /*allow_exceptions=*/false);
      if (j.is_object()) {
        j["consoleSize"] = {{"height", size_.rows}, {"width", size_.cols}};
        process = j.dump();
      }
    }
    files_.push_back(command.process_file);
    RETURN_IF_ERROR(WriteFile(command.process_file, process, 0600));
  }
  if (command.console_socket.empty()) return absl::OkStatus();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (command.console_socket.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("console socket ", command.console_socket, ": expected a path shorter than ",
                     sizeof(addr.sun_path), " bytes (the agent's work dir is too deep)"));
  }
  std::memcpy(addr.sun_path, command.console_socket.data(), command.console_socket.size());
  ::unlink(command.console_socket.c_str());
  console_.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!console_.valid() ||
      ::bind(console_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("console socket ", command.console_socket));
  }
  files_.push_back(command.console_socket);
  if (::listen(console_.get(), 1) != 0) return ErrnoStatus(errno, "listen on the console socket");
  return absl::OkStatus();
}

void ExecProcess::RemoveFiles() {
  for (const std::string& f : files_) ::unlink(f.c_str());
  files_.clear();
}

absl::Status ExecProcess::AwaitTerminal(absl::Duration timeout) {
  if (!console_.valid()) return absl::OkStatus();
  const absl::Time deadline = absl::Now() + timeout;
  // What crun said, when it exited without handing a terminal over.
  auto failed = [&](absl::string_view why) {
    std::string said;
    char buf[4096];
    for (ssize_t n; stderr_.valid() && (n = ::read(stderr_.get(), buf, sizeof(buf))) > 0;) {
      said.append(buf, static_cast<size_t>(n));
    }
    return absl::UnavailableError(
        absl::StrCat("the container's terminal: ", why,
                     said.empty() ? "" : absl::StrCat(": ", absl::StripAsciiWhitespace(said))));
  };
  UniqueFd conn;
  for (int listening = console_.get();;) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return failed("the OCI runtime did not hand it over in time");
    pollfd fds[2] = {{listening, POLLIN, 0}, {pidfd_.get(), POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) {
      return ErrnoStatus(errno, "poll the console socket");
    }
    if (fds[0].revents & POLLIN) {
      if (!conn.valid()) {
        conn.Reset(::accept4(console_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!conn.valid()) return ErrnoStatus(errno, "accept on the console socket");
        listening = conn.get();
        continue;
      }
      absl::StatusOr<int> fd = ReceiveFd(conn.get());
      if (!fd.ok()) return fd.status();
      terminal_.Reset(*fd);
      break;
    }
    if (fds[1].revents & POLLIN) return failed("the OCI runtime exited first");
  }
  console_.Reset();
  winsize ws = WinsizeOf(size_);
  ::ioctl(terminal_.get(), TIOCSWINSZ, &ws);
  return SetNonBlocking(terminal_.get());
}

absl::StatusOr<std::unique_ptr<ExecProcess>> ExecProcess::Start(const ExecCommand& command,
                                                                bool tty, TerminalSize size) {
  std::unique_ptr<ExecProcess> p(new ExecProcess());
  p->tty_ = tty;
  p->size_ = size;
  p->pid_file_ = command.pid_file;
  if (!p->pid_file_.empty()) ::unlink(p->pid_file_.c_str());
  if (absl::Status s = p->PrepareContainer(command); !s.ok()) {
    p->RemoveFiles();
    return s;
  }

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // A session of its own: the terminal opened below (without O_NOCTTY, after setsid, which
  // posix_spawn does before the file actions) becomes its controlling terminal.
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  UniqueFd child_in, child_out, child_err;
  absl::Status made = absl::OkStatus();
  std::string slave;
  if (tty && p->console_.valid()) {
    // crun's own stdin is empty; its output (errors) is read apart from the terminal.
    made = MakePipe(p->stderr_, child_err);
    if (made.ok()) {
      posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
      posix_spawn_file_actions_adddup2(&fa, child_err.get(), 1);
      posix_spawn_file_actions_adddup2(&fa, child_err.get(), 2);
    }
  } else if (tty) {
    p->terminal_.Reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    char name[128];
    if (!p->terminal_.valid() || ::grantpt(p->terminal_.get()) != 0 ||
        ::unlockpt(p->terminal_.get()) != 0 ||
        ::ptsname_r(p->terminal_.get(), name, sizeof(name)) != 0) {
      made = ErrnoStatus(errno, "open a pseudo-terminal");
    } else {
      slave = name;
      winsize ws = WinsizeOf(size);
      ::ioctl(p->terminal_.get(), TIOCSWINSZ, &ws);
      // The terminal belongs to whoever the command runs as (as a login's terminal does).
      const TaskUser& u = command.user;
      if (u.uid >= 0 && ::chown(name, static_cast<uid_t>(u.uid), static_cast<gid_t>(u.gid)) != 0) {
        made = ErrnoStatus(errno, absl::StrCat("chown ", name));
      }
      posix_spawn_file_actions_addopen(&fa, 0, slave.c_str(), O_RDWR, 0);
      posix_spawn_file_actions_adddup2(&fa, 0, 1);
      posix_spawn_file_actions_adddup2(&fa, 0, 2);
    }
  } else {
    made = MakePipe(child_in, p->stdin_);
    if (made.ok()) made = MakePipe(p->stdout_, child_out);
    if (made.ok()) made = MakePipe(p->stderr_, child_err);
    if (made.ok()) {
      posix_spawn_file_actions_adddup2(&fa, child_in.get(), 0);
      posix_spawn_file_actions_adddup2(&fa, child_out.get(), 1);
      posix_spawn_file_actions_adddup2(&fa, child_err.get(), 2);
    }
  }
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  pid_t pid = 0;
  if (made.ok()) {
    std::vector<std::string> argv = BuildWrapperArgv(command.wrapper);
    std::vector<char*> cargv = wrapper::ExecArray(argv);
    std::vector<char*> cenv = wrapper::ExecArray(command.env);
    int rc = ::posix_spawn(&pid, argv[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
    if (rc != 0) made = ErrnoStatus(rc, absl::StrCat("spawn ", argv[0]));
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (!made.ok()) {
    p->RemoveFiles();
    return made;
  }
  p->pid_ = pid;
  p->pidfd_.Reset(PidfdOpen(pid));
  if (!p->pidfd_.valid()) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    p->pid_ = 0;
    return ErrnoStatus(err, "pidfd_open (needs Linux >= 5.3)");
  }
  // (A container's terminal is made non-blocking when it comes: AwaitTerminal.)
  for (const UniqueFd* fd : {&p->terminal_, &p->stdin_, &p->stdout_, &p->stderr_}) {
    if (fd->valid()) RETURN_IF_ERROR(SetNonBlocking(fd->get()));
  }
  return p;
}

ExecProcess::~ExecProcess() {
  KillAndReap();
  RemoveFiles();
}

void ExecProcess::KillAndReap() {
  if (pid_ <= 0 || exit_.has_value()) return;
  Kill();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_ = ExecExit{.exit_code = 128 + SIGKILL, .signal = SIGKILL};
  if (!pid_file_.empty()) ::unlink(pid_file_.c_str());
  RemoveFiles();
}

void ExecProcess::CloseStdin() {
  if (!tty_) {
    stdin_.Reset();
    return;
  }
  termios t{};
  char eof = 4;  // ^D
  if (::tcgetattr(terminal_.get(), &t) == 0 && t.c_cc[VEOF] != 0)
    eof = static_cast<char>(t.c_cc[VEOF]);
  (void)::write(terminal_.get(), &eof, 1);
}

absl::Status ExecProcess::Resize(TerminalSize size) {
  if (!tty_) return absl::OkStatus();
  winsize ws = WinsizeOf(size);
  if (::ioctl(terminal_.get(), TIOCSWINSZ, &ws) != 0) return ErrnoStatus(errno, "TIOCSWINSZ");
  return absl::OkStatus();
}

void ExecProcess::Kill() {
  if (!pid_file_.empty()) {
    absl::StatusOr<std::string> text = ReadFile(pid_file_);
    int pid = 0;
    if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid) && pid > 1) {
      ::kill(pid, SIGKILL);
    }
  }
  if (pid_ > 0 && !exit_.has_value()) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
}

std::optional<ExecExit> ExecProcess::Reap() {
  if (exit_.has_value()) return exit_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return std::nullopt;
  ExecExit e;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  } else {
    e.exit_code = WEXITSTATUS(status);
  }
  exit_ = e;
  if (!pid_file_.empty()) ::unlink(pid_file_.c_str());
  RemoveFiles();
  return exit_;
}

}  // namespace paceline::agent
