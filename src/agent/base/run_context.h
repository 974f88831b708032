#pragma once
// RunContext: everything the agent knows about one run of a task, filled in by the hooks during
// Prepare, completed at start (process identities) and persisted as the run's checkpoint record
// (run_record_json.h), so a restarted agent can recover and clean up exactly what was acquired.
//
// Thread-safety: a value type owned by one TaskRunner on the runtime's thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/base/launch_request.h"

namespace paceline::agent {

// Who the task runs as. uid/gid -1: do not switch (the agent is not root).
struct TaskUser {
  std::string name;
  int uid = -1;
  int gid = -1;
  std::vector<uint32_t> groups;
  std::string home;
  friend bool operator==(const TaskUser&, const TaskUser&) = default;
};

struct RunContext {
  LaunchRequest request;
  std::string key;  // "JOB_INSTANCE_RUN": names the run dir and the cgroup
  std::string boot_id;

  // Filled by the hooks (Prepare), in order: user, sandbox, volume, ports, gpu, gang, cgroup.
  TaskUser user;
  std::string sandbox;    // <work_dir>/sandboxes/<job>_<instance>_<run>
  std::string run_state;  // <work_dir>/runs/<key>: prefix of the agent-private run files
                          // (.status written by the wrapper, .stdout.base, .stderr.base)
  std::string volume;     // <work_dir>/volumes/<job>/<instance>, or ""
  std::map<std::string, uint16_t> ports;
  std::vector<int> gpus;
  std::string cgroup;  // task cgroup name, "" = not isolated
  std::vector<std::string> cgroup_procs;
  // PACELINE_* variables contributed by the hooks (the final environment is built at start).
  std::map<std::string, std::string> env;
  std::vector<std::string> final_env;  // "K=V", what the task got, but for secret_env
  // Secrets (SecretsHook): the directory of secret files, whether it is a tmpfs of its own,
  // and the "K=V" of secret variables — the one field that is never persisted, so a recovered
  // run's health command no longer sees them.
  std::string secrets_dir;
  bool secrets_tmpfs = false;
  std::vector<std::string> secret_env;

  // A container run (ContainerHook): the image it pins (config digest), its id for the OCI
  // runtime, its bundle directory (config, and the rootfs overlay the agent mounts) and the
  // OCI config file, which lives in the secrets tmpfs when the task has secret variables.
  std::string image;
  std::string container_id;
  std::string bundle;
  std::string oci_config;
  // What the wrapper runs instead of /bin/sh -c COMMAND (a container: the runtime's command
  // line), and mount points it hides from it in a mount namespace of its own. Not persisted:
  // used at start only.
  std::vector<std::string> argv;
  std::vector<std::string> unmounts;

  // Set at start.
  int wrapper_pid = 0;
  uint64_t wrapper_start = 0;
  int task_pid = 0;
  uint64_t task_start = 0;
  absl::Time started = absl::InfinitePast();

  // A kill in progress (kept across restarts so the outcome is reported as a kill).
  bool kill_requested = false;
  bool kill_forced = false;
  absl::Time kill_deadline = absl::InfiniteFuture();
  // A kill waiting for its deregistration delay: the task is left alone (still serving) until
  // then, gets SIGTERM at this time and SIGKILL at kill_deadline. InfinitePast: no delay
  // pending (SIGTERM was sent, or is sent as soon as the task's pid is known).
  absl::Time kill_term_at = absl::InfinitePast();

  const RunId& run() const { return request.run; }
  // The task's whole environment: final_env and secret_env.
  std::vector<std::string> TaskEnv() const {
    std::vector<std::string> env = final_env;
    env.insert(env.end(), secret_env.begin(), secret_env.end());
    return env;
  }
  friend bool operator==(const RunContext&, const RunContext&) = default;
};

// "12_3_1" for run 12/3/1.
std::string RunKey(const RunId& run);

}  // namespace paceline::agent
