#pragma once
// Test harness for end-to-end tests: start the real `paceline` binary as a child process, talk
// to it on loopback, stop it by PID. Never kills anything it did not start.
//
//   Process p = Process::Start({"master", "--data-dir", dir, ...}, {.cwd = dir});
//   p.Signal(SIGINT); int status = p.WaitExit(absl::Seconds(10));
//
// Output goes to files in the test's temp dir so a failing test can print it (Output()).
// Thread-safety: single-threaded test code.

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace paceline::e2e {

// Path of the binary under test (set by CMake).
std::string PacelineBinary();
// A fresh directory under the system temp dir, removed by the caller (or left for debugging).
std::string MakeTempDir(const std::string& prefix);

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs `paceline args...` to completion (bounded by `timeout`) and captures its output.
RunResult RunPaceline(const std::vector<std::string>& args, const std::string& cwd = "",
                      absl::Duration timeout = absl::Seconds(60));

class Process {
 public:
  struct Options {
    std::string cwd;
    std::string log_dir;  // stdout/stderr files go here (default: cwd or /tmp)
    // NAME=VALUE entries added to the test's environment (replacing the same names).
    std::vector<std::string> env;
    // Another program than paceline (looked up in PATH); the args are its arguments.
    std::string program;
    // A network namespace (`ip netns` name) the child enters before it execs.
    std::string netns;
  };
  static Process Start(const std::vector<std::string>& args, const Options& options);
  Process(Process&& o) noexcept;
  Process(const Process&) = delete;
  ~Process();  // SIGKILLs and reaps the child if it is still running

  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // Waits for the child to exit; returns its exit code (128+signal when killed), or nullopt on
  // timeout (the child is left running).
  std::optional<int> WaitExit(absl::Duration timeout);
  bool Running();
  std::string Stdout() const;
  std::string Stderr() const;
  std::string Output() const { return Stdout() + Stderr(); }

 private:
  Process() = default;
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

// Runs `options.program args...` (paceline without a program) to completion, bounded by
// `timeout`, and captures its output.
RunResult RunProgram(const std::vector<std::string>& args, Process::Options options,
                     absl::Duration timeout = absl::Seconds(60));

// Polls `cond` every 20 ms until it holds or `timeout` passes; returns whether it held.
bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout);

std::string ReadFile(const std::string& path);

}  // namespace paceline::e2e
