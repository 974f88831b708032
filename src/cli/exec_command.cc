// `paceline task exec JOB/INSTANCE [-i] [-t] -- COMMAND...`: runs COMMAND inside a running task
// (TaskService.Exec). Its stdout and stderr become ours, its exit code is ours; with -i our stdin
// is passed on (without it the command reads end of file at once); with -t it gets a terminal:
// ours is put in raw mode for the while (restored at the end), and our window's size follows
// SIGWINCH. Failures (a refusal, a task that is not running, a lost host) print one line and
// exit 1; with nothing left to tell them apart from the command's own 1, the message is on
// stderr.
//
// Threads: the main one reads the stream and writes our stdout/stderr; an input thread waits on
// stdin (-i) and on a self-pipe (SIGWINCH, and the end) and writes stdin and resizes. Writes to
// the stream are serialized by a mutex; the main thread closes its side only after the input
// thread stopped.

#include "cli/exec_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cli/rpc.h"
#include "common/ids.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

struct ExecFlags {
  std::string task;
  std::vector<std::string> argv;
  bool pass_stdin = false;
  bool tty = false;
};

int wake_pipe[2] = {-1, -1};  // written by the SIGWINCH handler and at the end

void OnWinch(int) {
  const int saved = errno;
  char c = 'w';
  (void)::write(wake_pipe[1], &c, 1);
  errno = saved;
}

v1::TerminalSize OurSize() {
  v1::TerminalSize size;
  winsize ws{};
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
    size.set_rows(ws.ws_row);
    size.set_cols(ws.ws_col);
  }
  if (size.rows() == 0 || size.cols() == 0) {
    size.set_rows(24);
    size.set_cols(80);
  }
  return size;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Our terminal in raw mode while it lives (-t with a terminal on stdin).
class RawTerminal {
 public:
  RawTerminal() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

class ExecCall {
 public:
  ExecCall(const ExecFlags& f, TaskId task) : f_(f), task_(task) {}

  // One attempt; OK once the command's exit came (exit_code()).
  grpc::Status Session(Rpc::Attempt& a) {
    auto stream = v1::TaskService::NewStub(a.channel)->Exec(a.context);
    v1::ExecRequest open;
    v1::ExecOpen* o = open.mutable_open();
    o->set_job_id(task_.job.value());
    o->set_instance(task_.instance);
    for (const std::string& arg : f_.argv) o->add_argv(arg);
    o->set_tty(f_.tty);
    if (f_.tty) *o->mutable_size() = OurSize();
    if (!stream->Write(open)) return stream->Finish();
    if (!f_.pass_stdin) {
      v1::ExecRequest close;
      close.set_close_stdin(true);
      if (!stream->Write(close)) return stream->Finish();
    }
    stop_ = false;
    std::thread input([&] { PassInput(*stream); });
    std::optional<RawTerminal> raw;
    v1::ExecResponse resp;
    while (stream->Read(&resp)) {
      a.answered = true;
      if (resp.has_started() && f_.tty) raw.emplace();
      if (resp.has_stdout()) WriteAll(STDOUT_FILENO, resp.stdout());
      if (resp.has_stderr()) WriteAll(STDERR_FILENO, resp.stderr());
      if (resp.has_exit()) {
        exit_code_ = resp.exit().exit_code();
        break;
      }
    }
    raw.reset();
    stop_ = true;
    char c = 's';
    (void)::write(wake_pipe[1], &c, 1);
    input.join();
    {
      absl::MutexLock lock(&write_mu_);
      stream->WritesDone();
    }
    grpc::Status status = stream->Finish();
    if (exit_code_.has_value() && status.error_code() == grpc::StatusCode::CANCELLED) {
      return grpc::Status::OK;  // the exit came; the master cut a slow close short
    }
    if (status.ok() && !exit_code_.has_value()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the stream ended without the exit code");
    }
    return status;
  }
  std::optional<int> exit_code() const { return exit_code_; }

 private:
  using Stream = grpc::ClientReaderWriter<v1::ExecRequest, v1::ExecResponse>;

  bool Write(Stream& stream, const v1::ExecRequest& req) {
    absl::MutexLock lock(&write_mu_);
    return stream.Write(req);
  }

  void PassInput(Stream& stream) {
    bool reading = f_.pass_stdin;
    char buf[32 * 1024];
    while (!stop_) {
      pollfd fds[2] = {{wake_pipe[0], POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
      if (::poll(fds, reading ? 2 : 1, -1) < 0 && errno != EINTR) return;
      if (stop_) return;
      if (fds[0].revents & POLLIN) {
        char drain[64];
        (void)::read(wake_pipe[0], drain, sizeof(drain));
        if (f_.tty) {
          v1::ExecRequest resize;
          *resize.mutable_resize() = OurSize();
          if (!Write(stream, resize)) return;
        }
      }
      if (reading && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        v1::ExecRequest req;
        if (n > 0) {
          req.set_stdin(std::string(buf, static_cast<size_t>(n)));
        } else {
          req.set_close_stdin(true);
          reading = false;
        }
        if (!Write(stream, req)) return;
      }
    }
  }

  const ExecFlags& f_;
  const TaskId task_;
  absl::Mutex write_mu_;
  std::atomic<bool> stop_{false};
  std::optional<int> exit_code_;
};

void RunExec(CommandContext& ctx, const ExecFlags& f) {
  std::optional<TaskId> task = TaskId::Parse(f.task);
  if (!task) {
    return ctx.Fail(absl::InvalidArgumentError(
        absl::StrCat("task: '", f.task, "' is not JOB/INSTANCE, e.g. 42/0")));
  }
  if (f.argv.empty()) {
    return ctx.Fail(absl::InvalidArgumentError("command: expected the command to run after --"));
  }
  absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
  if (!rpc.ok()) return ctx.Fail(rpc.status());
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return ctx.Fail(absl::InternalError("pipe2 failed"));
  }
  struct sigaction sa {};
  sa.sa_handler = OnWinch;
  sa.sa_flags = SA_RESTART;
  if (f.tty) ::sigaction(SIGWINCH, &sa, nullptr);
  ExecCall call(f, *task);
  absl::Status s = rpc->Invoke(
      CallKind::kWrite, [&](Rpc::Attempt& a) { return call.Session(a); }, /*stream=*/true);
  if (f.tty) ::signal(SIGWINCH, SIG_DFL);
  if (!s.ok()) return ctx.Fail(s);
  ctx.exit_code = call.exit_code().value_or(1);
}

}  // namespace

void AddTaskExecCommand(CLI::App& task, CommandContext& ctx) {
  static ExecFlags f;  // one command runs per process
  CLI::App* cmd = task.add_subcommand(
      "exec",
      "run a command inside a running task (its cgroup, sandbox, user, variables, container)");
  cmd->add_option("task", f.task, "JOB/INSTANCE")->required();
  cmd->add_option("command", f.argv, "the command and its arguments, after --")->required();
  cmd->add_flag("-i,--stdin", f.pass_stdin, "pass stdin to the command");
  cmd->add_flag("-t,--tty", f.tty, "give the command a terminal (ours in raw mode meanwhile)");
  cmd->callback([&ctx] { RunExec(ctx, f); });
}

}  // namespace paceline::cli
