#pragma once
// Internals of paceline-task-wrapper (task_wrapper_main.cc), split by concern: option parsing
// and process setup (task_wrapper_setup.cc), supervision of the task (task_wrapper_supervise.cc).
// The protocol with the agent is in wrapper_protocol.h.
//
// Thread-safety: the wrapper is single-threaded; SetupAndExec runs in a child that may share
// the wrapper's memory until it execs (vfork-style).

#include <sys/types.h>

#include <string>
#include <vector>

namespace paceline::agent::wrapper {

struct Options {
  bool exec_mode = false;
  bool zygote_mode = false;
  bool init_mode = false;
  std::string cwd;
  int uid = -1;
  int gid = -1;
  std::vector<gid_t> groups;
  bool set_groups = false;
  std::vector<std::string> cgroups;
  // Open files of `cgroups`, in the same order (-1: joined by path). Not a flag: a supervisor
  // keeps the files of its last run's cgroup open for the next run (task_wrapper_supervise.cc).
  std::vector<int> cgroup_fds;
  std::vector<std::string> self_cgroups;
  std::vector<std::string> unmounts;
  std::string state;  // path prefix of the status and log offset files
  std::string stdout_path;
  std::string stderr_path;
  long long log_max = 64LL << 20;
  std::vector<char*> command;  // argv of the task, NULL-terminated (empty: none)
  std::vector<char*> env;      // the task's environment, NULL-terminated (empty: environ)
};

// Parses "--name=value ... -- COMMAND..."; false on an unknown flag, or a missing command in
// exec and init mode (a supervisor gets its commands in run requests; a zygote has none).
bool ParseOptions(int argc, char** argv, Options* o);
bool WriteAllFd(int fd, const char* data, size_t n);
// Writes `pid` into a cgroup.procs file (0: the calling process).
bool JoinCgroup(const std::string& procs_file, pid_t pid);
// Sets up the calling process as the task (process group, cgroups, stdout/stderr, user, cwd,
// signals) and execs the command. Returns only on failure, with a message naming the failed step in
// `error`. It allocates nothing and changes no state of the wrapper's memory, since it may run
// in a vfork-style child.
void SetupAndExec(const Options& o, int stdout_fd, int stderr_fd, char* error, size_t error_len);
// Supervise mode (see wrapper_protocol.h): runs the requests that come on fd 3, one at a time,
// until EOF; returns the wrapper's exit code.
int Supervise(const Options& o);
// Zygote mode (task_wrapper_zygote.cc): forks supervising wrappers on request until EOF.
int Zygote(const Options& o);
// Init mode (task_wrapper_init.cc): a container's first process; forwards signals, reaps.
int Init(const Options& o);

}  // namespace paceline::agent::wrapper
