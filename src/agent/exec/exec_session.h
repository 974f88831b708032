#pragma once
// ExecSession: the streams of one exec'd command (exec_process.h), pumped by Run() on a thread
// of the caller's (the agent daemon gives each session one):
//
//   output  read from the command in pieces of at most kChunk bytes and handed to the sink, as
//           long as the bytes handed on but not yet credited stay within `window` (the master
//           credits what it has passed to the caller; a command that writes faster than the
//           caller reads is blocked in its write, and the agent holds at most `window`);
//   input   stdin, its end, resizes, credits and a cancel arrive from any thread (Post); stdin
//           is written as the command reads it, and the bytes written are credited back to the
//           sender in the next event, so the sender holds to its own window;
//   start   a container's terminal is awaited first (exec_process.h); without it the one event
//           says why;
//   end     once the command exited and its output is drained (end of file on every output,
//           or a moment without output when a descendant keeps them open), the last event
//           carries the exit; a cancel kills the command and ends Run with no further event.
//
// Thread-safety: Post and Cancel from any thread; Run on one thread; the sink is called on
// Run's thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/exec/exec_process.h"
#include "agent/file_util.h"

namespace paceline::agent {

// What the pump hands on: output, credit for stdin, and, last, the exit; or, alone, why the
// command could not start (a container's terminal that never came).
struct ExecEvent {
  std::string error;
  bool started = false;
  std::string out;
  std::string err;
  uint32_t stdin_credit = 0;
  std::optional<ExecExit> exit;
};

// What the caller sends.
struct ExecInputs {
  std::string stdin;
  bool close_stdin = false;
  std::optional<TerminalSize> resize;
  uint32_t output_credit = 0;
  bool cancel = false;
};

class ExecSession {
 public:
  static constexpr size_t kChunk = 32 * 1024;
  // How long output is still read after the command exited, when something else holds its
  // output open (a daemon it started).
  static constexpr int kDrainMs = 200;
  // How long a container's runtime may take to hand its terminal over.
  static constexpr absl::Duration kTerminalTimeout = absl::Seconds(15);
  using Sink = std::function<void(ExecEvent)>;

  // `window`: the bytes of output that may be handed on without credit (at least kChunk).
  ExecSession(std::unique_ptr<ExecProcess> process, uint32_t window, Sink sink);
  ~ExecSession();

  // Pumps until the command ended and its output was handed on (the last event has the exit),
  // or until cancelled.
  void Run();
  // Input for the command (applied by Run, in order).
  void Post(ExecInputs in);
  void Cancel() { Post(ExecInputs{.cancel = true}); }

 private:
  // Applies what was posted; false when cancelled.
  bool TakeInputs();
  // Writes what the command takes of stdin now; returns the bytes written (or dropped, once
  // the command closed its stdin).
  uint32_t WriteStdin();
  // Reads one piece of `fd` into `out`; false at end of file (or an error: a terminal whose
  // every other end closed reads EIO).
  bool ReadSome(int fd, std::string& out);

  std::unique_ptr<ExecProcess> process_;
  const uint32_t window_;
  Sink sink_;
  UniqueFd wake_;  // an eventfd: Post wakes Run

  mutable absl::Mutex mu_;
  ExecInputs posted_ ABSL_GUARDED_BY(mu_);

  // Run's own state.
  std::string stdin_;         // to write
  bool close_stdin_ = false;  // once stdin_ is written
  bool stdin_closed_ = false;
  uint64_t unacked_ = 0;  // output handed on, not credited yet
  bool out_open_ = true, err_open_ = true;
};

}  // namespace paceline::agent
