#pragma once
// BuildOciConfig: the OCI runtime configuration (runtime-spec v1.0 config.json) of one
// container run, from the task's context and its image — what `crun run` is given.
//
//   process   argv (task.command as /bin/sh -c COMMAND, else entrypoint + args, each the
//             spec's or the image's), env (the image's, then the task's: spec env and the
//             PACELINE_* variables; the agent's base_env only where the image sets nothing),
//             cwd (the sandbox), user (uid, gid, additional gids), no new privileges, Docker's
//             default capability set (none beyond it); resource limits are the agent's
//             (inherited rlimits, the task's cgroup)
//   root      the rootfs overlay the agent mounted; read-only when read_only_rootfs
//   mounts    /proc, /dev (tmpfs), /dev/pts, /dev/shm, /dev/mqueue, /sys (read-only); the
//             sandbox, the secrets directory (read-only) and the volume at their host paths,
//             so that every PACELINE_* path means the same inside; with the host network the
//             host's /etc/resolv.conf and /etc/hosts (read-only); then the spec's mounts
//   devices   the CDI edits of the task's GPUs (cdi.h): env, linux.devices, mounts, hooks,
//             additional groups
//   linux     namespaces pid, ipc, uts, mount (and network when network: none); no cgroup
//             settings: the runtime runs with its cgroup manager disabled, so the container
//             stays in the task's cgroup, whose limits the agent set; Docker's masked and
//             read-only /proc paths
//
// Thread-safety: a pure function.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/run_context.h"
#include "agent/devices/cdi.h"
#include "image/oci_types.h"

namespace paceline::agent {

struct OciConfigInput {
  const RunContext* ctx = nullptr;  // request.spec.container set; sandbox, volume, secrets
  const image::ImageConfig* image = nullptr;
  std::string rootfs;                           // the mounted overlay
  std::map<std::string, std::string> base_env;  // the agent's base_env
  std::vector<std::string> env;                 // "K=V": the task's (ctx.TaskEnv())
  std::string hostname;
  std::string init;  // the static wrapper binary, mounted at /.paceline/init as the first process
  // The CDI edits of the task's devices (cdi.h), device nodes completed: their env (over the
  // task's), nodes (linux.devices), mounts (after the others), hooks and additional groups.
  const CdiEdits* devices = nullptr;
};

// The config.json text. INVALID_ARGUMENT when nothing would run (no command, entrypoint, args
// nor image Cmd/Entrypoint), or a mount source that is not allowed (checked by the caller).
absl::StatusOr<std::string> BuildOciConfig(const OciConfigInput& in);

// The argv the container runs (see above); empty when nothing would run.
std::vector<std::string> ContainerArgv(const ContainerSpec& c, const std::string& command,
                                       const image::ImageConfig& image);

}  // namespace paceline::agent
