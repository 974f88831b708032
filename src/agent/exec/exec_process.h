#pragma once
// ExecProcess: one command of `paceline task exec` (exec_command.h), started with its stdin,
// stdout and stderr on a new pseudo-terminal (tty: the command's controlling terminal, made its
// user's, with the caller's window size) or on three pipes. The agent's ends are non-blocking.
//
//   tty:   terminal() is read for the output and written for the input; no stderr.
//   pipes: stdin_fd() is written, stdout_fd() and stderr_fd() read.
//
//   a container with a terminal: crun makes the terminal in the container and hands its master
//   side over the console socket (exec_command.h); AwaitTerminal receives it, and until then
//   terminal() is -1. crun's own output (its errors) is read from stderr_fd().
//
// The command leads a session of its own (so it also leads its process group). Kill() sends
// SIGKILL to that group, and for a container command to the pid crun wrote. The destructor
// kills a command still running and reaps it.
//
// Thread-safety: one thread at a time (the session's pump, exec_session.h).

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/exec/exec_command.h"
#include "agent/file_util.h"

namespace paceline::agent {

// How a command ended: its exit code, or the signal that killed it (exit_code = 128 + signal,
// as a shell reports it).
struct ExecExit {
  int exit_code = 0;
  int signal = 0;
};

class ExecProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ExecProcess>> Start(const ExecCommand& command, bool tty,
                                                            TerminalSize size);
  ~ExecProcess();
  ExecProcess(const ExecProcess&) = delete;
  ExecProcess& operator=(const ExecProcess&) = delete;

  bool tty() const { return tty_; }
  pid_t pid() const { return pid_; }
  // Readable once the command exited.
  int pidfd() const { return pidfd_.get(); }
  // Where the input goes (the terminal, or the stdin pipe); -1 once closed.
  int stdin_fd() const { return tty_ ? terminal_.get() : stdin_.get(); }
  // Where the output comes from (the terminal, or the stdout pipe).
  int stdout_fd() const { return tty_ ? terminal_.get() : stdout_.get(); }
  // -1 with a tty (but for a container's, where crun's own output comes from).
  int stderr_fd() const { return stderr_.get(); }

  // A container command with a terminal whose master side has not come yet.
  bool awaiting_terminal() const { return console_.valid(); }
  // Receives the terminal from crun, gives it the size and makes it non-blocking. UNAVAILABLE
  // when crun exited first (with what it said) or after `timeout`.
  absl::Status AwaitTerminal(absl::Duration timeout);

  // No more input: the pipe is closed; a terminal gets its end-of-file character (^D), which
  // a reading command in canonical mode takes as the end of its input.
  void CloseStdin();
  // The terminal's new size (SIGWINCH to the command); nothing without a tty.
  absl::Status Resize(TerminalSize size);
  // SIGKILL to the command's process group (and to a container command's pid).
  void Kill();
  // Kill(), then waits for the command and reaps it.
  void KillAndReap();
  // Once pidfd() is readable: reaps the command and says how it ended (nullopt: not yet).
  std::optional<ExecExit> Reap();
  bool reaped() const { return exit_.has_value(); }

 private:
  ExecProcess() = default;
  // Writes the process file and listens on the console socket (a container command).
  absl::Status PrepareContainer(const ExecCommand& command);
  void RemoveFiles();

  bool tty_ = false;
  pid_t pid_ = 0;
  UniqueFd pidfd_;
  UniqueFd terminal_;  // tty: the terminal's master side
  UniqueFd stdin_, stdout_, stderr_;
  UniqueFd console_;  // a container with a terminal: listening for crun, until it connected
  TerminalSize size_;
  std::string pid_file_;
  std::vector<std::string> files_;  // removed once the command ended
  std::optional<ExecExit> exit_;
};

}  // namespace paceline::agent
