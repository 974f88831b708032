#pragma once
// TaskRuntime: the host agent's task runtime — runs tasks as real Linux processes on this
// machine, isolates them, watches them, and reports what happens to them. The master session
// (gRPC stream) is built on top of this API; everything below it lives here.
//
// What it does for one run: see task_lifecycle.h (prepare -> start -> watch -> health -> stop ->
// cleanup -> recover) and docs/agent.md. In short: a sandbox directory, a cgroup (v2, v1 or
// none), ports, GPUs, a volume, a gang peer file, then `/bin/sh -c COMMAND` in its own process
// group under paceline-task-wrapper (wrapper_protocol.h), as an unprivileged user when the agent is
// root. Status updates go to a durable outbox until acknowledged.
//
// Threading: single-threaded and not thread-safe. One thread (the "agent loop") owns the object
// and makes every call. Nothing blocks for long: Launch spawns and returns, Kill signals and
// returns; the rest happens in Poll(), which the owner calls whenever fd() is readable or
// NextDeadline() has passed — RunOnce(max_wait) does exactly that. Another thread (e.g. a gRPC
// handler) may only call Wakeup(), to interrupt a RunOnce wait after posting work to the loop,
// and read the GPUs' health (GpuFaults, GpuHealthVersion).
//
// Durability: every run is checkpointed (checkpoint.h) before its task may start; events are
// appended to the outbox (outbox.h) as they happen and fsynced in batches — at the latest when
// the caller fetches them with PendingEvents(), so nothing is delivered that is not durable.
// Destroying the runtime (or killing the agent process) leaves tasks running; a new runtime on
// the same work dir re-adopts them in Recover().
//
// Several agents may run on one machine with distinct names, work dirs and port ranges.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/base/agent_config.h"
#include "agent/base/launch_request.h"
#include "agent/base/poller.h"
#include "agent/base/task_event.h"
#include "agent/container/container_hook.h"
#include "agent/container/image_pulls.h"
#include "agent/devices/cdi.h"
#include "agent/devices/nvml.h"
#include "agent/exec/exec_command.h"
#include "agent/host/host_info.h"
#include "agent/host/usage.h"
#include "agent/isolation/cgroup_driver.h"
#include "agent/isolation/gpu_hook.h"
#include "agent/launch/port_allocator.h"
#include "agent/logs/log_reader.h"
#include "agent/recovery/checkpoint.h"
#include "agent/recovery/outbox.h"
#include "agent/task_lifecycle.h"
#include "agent/task_runner.h"
#include "common/clock.h"

namespace paceline::agent {

enum class RunState { kStarting, kRunning, kStopping, kEnding };

struct RunStatus {
  RunId run;
  RunState state = RunState::kStarting;
  int pid = 0;
  HealthState health = HealthState::kUnknown;
  ReadinessState readiness = ReadinessState::kUnknown;  // UNKNOWN also without a check
  std::map<std::string, uint16_t> ports;
  std::vector<int> gpus;
  std::string sandbox;
  absl::Time started;
};

struct LogRequest {
  RunId run;
  LogStream stream = LogStream::kStdout;
  std::optional<int64_t> tail_lines;  // set: the last N lines; unset: read from `offset`
  int64_t offset = 0;
  int64_t max_bytes = 1 << 20;
};

class TaskRuntime {
 public:
  // Validates the config, takes the work dir's lock (one agent per work dir), detects the host
  // and the cgroup version, and opens the checkpoint and the outbox. Call Recover() next.
  static absl::StatusOr<std::unique_ptr<TaskRuntime>> Create(AgentConfig config,
                                                             const Clock& clock = RealClock::Get());
  // Leaves every task running (a later runtime recovers them).
  ~TaskRuntime();

  const HostInfo& host() const { return host_; }
  const AgentConfig& config() const { return config_; }

  // Re-adopts the checkpointed runs still alive (identified by pid and process start time),
  // reports those that ended meanwhile, and removes leftovers. Must precede Launch; idempotent.
  absl::Status Recover();

  // Starts a run. OK = accepted: the outcome arrives as events (RUNNING, then a terminal one;
  // FAILED when the command cannot be started). OK without effect when the run is already
  // live (a retransmission). Errors reject the launch and leave nothing behind:
  // InvalidArgument (malformed), AlreadyExists (this run already ran here), ResourceExhausted
  // (ports, GPUs), NotFound / PermissionDenied (task user), FailedPrecondition (no Recover).
  absl::Status Launch(const LaunchRequest& request);
  // The host's image cache; null when the host runs no containers.
  image::ImageStore* images() { return images_.get(); }

  // Stops a run: its checks stop at once; it is left running for `deregistration_delay` (its
  // clients stop sending to it meanwhile), then gets SIGTERM to its process group, and SIGKILL
  // `grace` later (default: the spec's kill_grace). A run that ends by itself during the delay
  // ends as it would have. A repeated Kill never moves SIGTERM; it can only shorten the grace.
  // OK also for an unknown or already ending run (nothing to do).
  absl::Status Kill(const RunId& run, std::optional<absl::Duration> grace = std::nullopt,
                    absl::Duration deregistration_delay = absl::ZeroDuration());

  // Does all pending work without blocking: reaps, reads wrapper reports, advances kill
  // deadlines and health checks, records events; batches fsyncs.
  void Poll(absl::Time now);
  // Waits until fd() is readable, NextDeadline() or `max_wait`, then Poll(clock.Now()).
  void RunOnce(absl::Duration max_wait);
  // Interrupts a RunOnce wait. Other threads may call it (and the GPU health readers below).
  void Wakeup() { poller_->Wakeup(); }
  // Readable when Poll has work (for embedding in another event loop).
  int fd() const { return poller_->fd(); }
  // When Poll next has timed work (kill deadlines, health probes, batched fsync).
  absl::Time NextDeadline() const;

  // Events not yet acknowledged, oldest first (made durable first).
  std::vector<TaskEvent> PendingEvents(size_t max = SIZE_MAX);
  // How many events are not acknowledged yet (no sync, nothing copied).
  size_t PendingEventCount() const;
  // The sequence number of the latest event recorded (0: none yet).
  uint64_t LastEventSeq() const;
  // Acknowledges every event up to `seq`.
  absl::Status Ack(uint64_t seq);

  std::vector<RunStatus> ListRuns() const;
  std::optional<RunStatus> GetRun(const RunId& run) const;
  UsageSnapshot Usage(absl::Time now) const;
  // stdout/stderr of a live or finished run (until its sandbox is removed by retention).
  absl::StatusOr<LogChunk> ReadLog(const LogRequest& request) const;
  // `argv` inside the environment of live run `run` (`paceline task exec`, exec_command.h);
  // `session` names the command's private files. NOT_FOUND when the run is not on this host,
  // FAILED_PRECONDITION when it is not running (starting, or ending).
  absl::StatusOr<ExecCommand> ExecCommandFor(const RunId& run, const std::vector<std::string>& argv,
                                             bool tty, uint64_t session) const;

  // fsyncs the checkpoint and the outbox now.
  absl::Status Sync();

  // The GPU devices found unhealthy (devices/nvml.h), and a number that grows whenever they
  // change; empty and 0 unless NVML discovered the GPUs (not with the config's `gpus`). Any
  // thread may call them.
  std::vector<GpuFault> GpuFaults() const;
  uint64_t GpuHealthVersion() const;

 private:
  TaskRuntime(AgentConfig config, const Clock& clock);
  absl::Status Init();
  // Locks the agent's cgroup (flock, released when the process exits however it exits): two
  // agents of one name on a host would share their cgroups, and each would kill the other's
  // tasks as leftovers when it recovers. FAILED_PRECONDITION when another agent holds it.
  absl::Status LockAgentCgroup();
  absl::Status InitContainers();
  // NVML, unless the config gives the GPUs or turns it off, or it is not there; null then.
  std::unique_ptr<Nvml> OpenNvml() const;
  // Launch once the image is there: hooks, wrapper.
  absl::Status StartRun(const LaunchRequest& request);
  // Launches whose image pull ended: start them, or fail them with the pull's error.
  void StartPulled();
  void EmitNotStarted(const RunId& run, TaskEventType type, TerminationReason reason,
                      std::string message);
  void Reschedule(const RunId& run);
  void RunTimers(absl::Time now);
  void ReapFinished();
  void CollectGarbage(absl::Time now);
  void Emit(TaskEvent event);
  // Reaps a wrapper that was released after its run ended, once it exits.
  void Reap(UniqueFd pidfd);
  RunStatus StatusOf(const TaskRunner& r) const;

  AgentConfig config_;
  const Clock& clock_;
  HostInfo host_;
  UniqueFd lock_;         // the work dir's agent.lock
  UniqueFd cgroup_lock_;  // the agent's cgroup directory (LockAgentCgroup)
  std::unique_ptr<Poller> poller_;
  std::unique_ptr<CgroupDriver> cgroups_;
  std::unique_ptr<Checkpoint> checkpoint_;
  std::unique_ptr<Outbox> outbox_;
  std::unique_ptr<PortAllocator> ports_;
  std::unique_ptr<GpuAllocator> gpus_;
  std::unique_ptr<CdiSpecDirs> cdi_;            // the CDI specs the launch hooks read
  std::unique_ptr<GpuHealthWatch> gpu_health_;  // when NVML discovered the GPUs
  std::unique_ptr<WrapperSpawner> spawner_;
  std::unique_ptr<SupervisorPool> supervisors_;
  OciRuntime oci_;
  std::unique_ptr<image::ImageStore> images_;
  std::unique_ptr<ImagePulls> pulls_;
  TaskLifecycle lifecycle_;
  RuntimeServices services_;
  absl::flat_hash_map<RunId, std::unique_ptr<TaskRunner>> runners_;
  using Timer = std::pair<absl::Time, RunId>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::vector<RunId> finished_;
  struct Reaping {
    uint64_t watch = 0;
    UniqueFd pidfd;
  };
  absl::flat_hash_map<int, Reaping> reaping_;  // by pidfd number
  bool recovered_ = false;
  absl::Time last_sync_ = absl::InfinitePast();
  absl::Time next_gc_ = absl::InfinitePast();
  absl::Time next_pool_trim_ = absl::InfinitePast();
};

}  // namespace paceline::agent
