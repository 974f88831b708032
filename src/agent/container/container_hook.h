#pragma once
// ContainerHook: runs a task from an OCI image (docs/containers.md). Placed right after the
// user hook, so that the sandbox, the secrets and the volume are made for the container's user.
//
//   Prepare   the image must be in the cache (the runtime pulls it before the launch): pin it;
//             the container's user (task.container.user, else the image's User, else the
//             agent's task user) becomes ctx.user — a name is looked up in the image's
//             /etc/passwd; root only when the agent allows root tasks.
//   Finish    mounts the rootfs overlay (the cached image below, the run's own layer above) at
//             BUNDLE/rootfs, writes the OCI config (oci_config.h), and sets ctx.argv to the
//             runtime's `run` command line; the wrapper then runs it as the task. A task that
//             holds GPUs gets their CDI edits (cdi.h: devices nvidia.com/gpu=NAME, NAME the
//             device's cdi_name — "0", a MIG instance's "0:1" — else its slot; from the specs
//             of `cdi`, read again whenever they change); without a spec for one of them the
//             launch fails saying how to generate one.
//   Recover   re-pins the image.
//   Cleanup   deletes what the runtime left of the container, unmounts the overlay, removes
//             the bundle and unpins the image.
//
// Tasks without task.container pass through untouched.
//
// Thread-safety: runtime thread only (the image store is thread-safe).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/agent_config.h"
#include "agent/base/task_hook.h"
#include "agent/devices/cdi.h"
#include "common/clock.h"
#include "image/image_store.h"

namespace paceline::agent {

// The OCI runtime as the agent runs it.
struct OciRuntime {
  std::string path;  // the crun executable; "" = none on this host
  std::string root;  // its state directory (--root), one per agent
  // Mount points to hide from the runtime: on a host with cgroup v1 and a cgroup2 hierarchy
  // that has controllers, crun refuses to start ("hybrid mode"); it runs with its cgroup
  // manager disabled anyway, so the wrapper detaches that mount in a namespace of its own.
  std::vector<std::string> hide;
  // Why this host runs no containers, when `path` is empty (the launch error says it).
  std::string missing;

  // `crun run` of the bundle, and `crun exec` of a command (health checks) as `uid:gid`.
  std::vector<std::string> RunArgv(const std::string& id, const std::string& bundle,
                                   const std::string& config) const;
  std::vector<std::string> ExecArgv(const std::string& id, int uid, int gid,
                                    const std::vector<std::string>& env,
                                    const std::string& command) const;
};

// Finds the runtime (`configured` as a path or a name in PATH) and what it must not see.
// FAILED_PRECONDITION naming the runtime when it cannot be found.
absl::StatusOr<OciRuntime> DetectOciRuntime(const std::string& configured,
                                            const std::string& state_dir);

class ContainerHook : public TaskHook {
 public:
  // `runtime` empty path: every container launch fails saying the host has no runtime.
  // `wrapper_path`: the static paceline-task-wrapper, the container's init. `gpus`: the host's
  // GPU devices (HostInfo::gpus), for their CDI names; `cdi`, their specs (must outlive the
  // hook when there are GPUs).
  ContainerHook(const AgentConfig& config, OciRuntime runtime, image::ImageStore* images,
                std::string wrapper_path, const Clock& clock, std::vector<GpuDevice> gpus = {},
                CdiSpecDirs* cdi = nullptr);
  absl::string_view name() const override { return "container"; }
  absl::Status Prepare(RunContext& ctx) override;
  absl::Status Finish(RunContext& ctx) override;
  absl::Status Recover(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

  const OciRuntime& runtime() const { return runtime_; }

 private:
  const AgentConfig& config_;
  OciRuntime runtime_;
  image::ImageStore* images_;
  std::string wrapper_path_;
  const Clock& clock_;
  std::vector<GpuDevice> gpus_;
  CdiSpecDirs* cdi_;
};

}  // namespace paceline::agent
