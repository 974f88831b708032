#include "agent/task_runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/host/proc_stat.h"
#include "agent/isolation/cgroup_hook.h"
#include "agent/isolation/task_user_hook.h"
#include "agent/launch/gang_hook.h"
#include "agent/launch/identity_hook.h"
#include "agent/launch/sandbox_hook.h"
#include "agent/launch/secrets_hook.h"
#include "agent/launch/volume_hook.h"
#include "agent/launch/wrapper_launcher.h"
#include "agent/launch/wrapper_protocol.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace paceline::agent {
namespace {

// How often Poll fsyncs a dirty checkpoint/outbox on its own (PendingEvents always does).
constexpr absl::Duration kSyncInterval = absl::Milliseconds(200);
constexpr absl::Duration kGcInterval = absl::Minutes(10);
// Free supervisors kept for the next runs: enough for the runs a burst of ends frees before the
// next launches come (each costs about 100 KiB: 64 KiB of its own pages, a kernel stack, page
// tables). The free supervisors and the kept cgroups (cgroup v1) that no run took since the
// previous trim are let go every kPoolTrimInterval.
constexpr size_t kMaxFreeSupervisors = 4096;
constexpr absl::Duration kPoolTrimInterval = absl::Minutes(1);

// When tasks run as another user, every parent of the work dir must be traversable by them.
absl::Status CheckTraversable(const std::string& work_dir) {
  std::string dir = Dirname(work_dir);
  while (true) {
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tasks run as an unprivileged user but cannot reach the work dir ", work_dir, ": ", dir,
          " is not traversable by others (chmod o+x ", dir, ") — or choose a work dir elsewhere"));
    }
    if (dir == "/" || dir == ".") break;
    dir = Dirname(dir);
  }
  return absl::OkStatus();
}

}  // namespace

TaskRuntime::TaskRuntime(AgentConfig config, const Clock& clock)
    : config_(std::move(config)), clock_(clock), lifecycle_(config_) {}

TaskRuntime::~TaskRuntime() {
  runners_.clear();      // unregisters; does not kill
  supervisors_.reset();  // the free ones exit
  for (auto& [fd, r] : reaping_) poller_->Remove(r.watch);
  reaping_.clear();
  if (checkpoint_) checkpoint_->Sync().IgnoreError();
  if (outbox_) outbox_->Sync().IgnoreError();
  // A clean exit leaves no empty cgroup behind; live tasks keep theirs (and so the agent's).
  spawner_.reset();  // the zygote lives in the supervisors' cgroup
  if (cgroups_) cgroups_->RemoveAgentCgroupsIfEmpty();
}

absl::StatusOr<std::unique_ptr<TaskRuntime>> TaskRuntime::Create(AgentConfig config,
                                                                 const Clock& clock) {
  RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<TaskRuntime> rt(new TaskRuntime(std::move(config), clock));
  RETURN_IF_ERROR(rt->Init());
  return rt;
}

absl::Status TaskRuntime::LockAgentCgroup() {
  const std::string dir = cgroups_->AgentDir();
  if (dir.empty()) return absl::OkStatus();
  cgroup_lock_.Reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cgroup_lock_.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  if (::flock(cgroup_lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "another agent named '", config_.name, "' runs on this host (it holds the cgroup ", dir,
        "); give each agent on a host its own --name"));
  }
  return absl::OkStatus();
}

absl::Status TaskRuntime::Init() {
  const std::string& wd = config_.work_dir;
  RETURN_IF_ERROR(MakeDirs(wd, 0711));
  bool switch_users = ::geteuid() == 0;
  if (switch_users) {
    struct stat st;
    if (::stat(wd.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      ::chmod(wd.c_str(), (st.st_mode & 07777) | 0011);
    }
    RETURN_IF_ERROR(CheckTraversable(wd));
  }
  lock_.Reset(::open(absl::StrCat(wd, "/agent.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_.valid()) return ErrnoStatus(errno, absl::StrCat("open ", wd, "/agent.lock"));
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("another agent uses the work dir ", wd, "; give each agent its own work dir"));
  }
  RETURN_IF_ERROR(MakeDirs(absl::StrCat(wd, "/sandboxes"), 0711));
  RETURN_IF_ERROR(MakeDirs(absl::StrCat(wd, "/volumes"), 0711));
  RETURN_IF_ERROR(MakeDirs(absl::StrCat(wd, "/runs"), 0700));
  ::chmod(absl::StrCat(wd, "/sandboxes").c_str(), 0711);
  ::chmod(absl::StrCat(wd, "/volumes").c_str(), 0711);

  ASSIGN_OR_RETURN(services_.wrapper_path, FindWrapper(config_.wrapper_path));
  ASSIGN_OR_RETURN(poller_, Poller::Create());
  ASSIGN_OR_RETURN(cgroups_, CreateCgroupDriver(config_));
  RETURN_IF_ERROR(LockAgentCgroup());
  std::unique_ptr<Nvml> nvml = OpenNvml();
  ASSIGN_OR_RETURN(host_, DetectHostInfo(config_, *cgroups_, nvml.get()));
  if (nvml != nullptr && !host_.gpus.empty()) {
    absl::StatusOr<std::unique_ptr<GpuHealthWatch>> watch =
        GpuHealthWatch::Start(std::move(nvml), host_.gpus);
    if (watch.ok()) {
      gpu_health_ = *std::move(watch);
      spdlog::info("agent {}: {} GPU device(s) from NVML, their health watched", config_.name,
                   host_.gpus.size());
    } else {
      spdlog::warn("agent {}: GPU health is not watched: {}", config_.name,
                   watch.status().ToString());
    }
  }
  ASSIGN_OR_RETURN(checkpoint_, Checkpoint::Open(absl::StrCat(wd, "/checkpoint")));
  ASSIGN_OR_RETURN(outbox_, Outbox::Open(absl::StrCat(wd, "/outbox")));
  ports_ = std::make_unique<PortAllocator>(config_.port_min, config_.port_max);
  spawner_ = std::make_unique<WrapperSpawner>(
      services_.wrapper_path, cgroups_->SupervisorProcsFiles(), config_.wrapper_zygote);
  supervisors_ = std::make_unique<SupervisorPool>(
      *spawner_, [this](UniqueFd pidfd) { Reap(std::move(pidfd)); }, kMaxFreeSupervisors);
  gpus_ = std::make_unique<GpuAllocator>(host_.gpus);
  if (checkpoint_->skipped_records() > 0) {
    spdlog::warn("checkpoint: skipped {} malformed records", checkpoint_->skipped_records());
  }

  lifecycle_.AddHook(
      std::make_unique<TaskUserHook>(config_.task_user, switch_users, config_.allow_root_tasks));
  RETURN_IF_ERROR(InitContainers());
  cdi_ = std::make_unique<CdiSpecDirs>(config_.cdi_dirs);  // shared by the two hooks below
  lifecycle_.AddHook(std::make_unique<ContainerHook>(
      config_, oci_, images_.get(), services_.wrapper_path, clock_, host_.gpus, cdi_.get()));
  lifecycle_.AddHook(std::make_unique<SandboxHook>(wd));
  lifecycle_.AddHook(std::make_unique<VolumeHook>(wd));
  lifecycle_.AddHook(std::make_unique<SecretsHook>());
  lifecycle_.AddHook(std::make_unique<IdentityHook>(config_.master_addr, config_.master_ca_pem));
  lifecycle_.AddHook(std::make_unique<PortsHook>(*ports_));
  lifecycle_.AddHook(std::make_unique<GpuHook>(*gpus_));
  lifecycle_.AddHook(std::make_unique<GangHook>());
  lifecycle_.AddHook(std::make_unique<CgroupHook>(*cgroups_, config_.cpu_hard_limit,
                                                  config_.pids_max, host_.gpus, cdi_.get()));

  services_.config = &config_;
  services_.boot_id = BootId();
  services_.poller = poller_.get();
  services_.cgroups = cgroups_.get();
  services_.supervisors = supervisors_.get();
  services_.oci = &oci_;
  services_.checkpoint = checkpoint_.get();
  services_.lifecycle = &lifecycle_;
  services_.emit = [this](TaskEvent e) { Emit(std::move(e)); };
  services_.reschedule = [this](const RunId& run) { Reschedule(run); };
  services_.reap = [this](UniqueFd pidfd) { Reap(std::move(pidfd)); };
  services_.now = clock_.Now();
  spdlog::info("agent {}: work dir {}, isolation: {}", config_.name, wd, cgroups_->Describe());
  return absl::OkStatus();
}

std::unique_ptr<Nvml> TaskRuntime::OpenNvml() const {
  if (config_.gpus || config_.nvml_library.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(config_.nvml_library);
  if (nvml.ok()) return *std::move(nvml);
  if (!absl::IsNotFound(nvml.status())) {  // NotFound: no NVIDIA driver here, nothing to say
    spdlog::warn("agent {}: NVML: {}; GPUs from nvidia-smi", config_.name,
                 nvml.status().ToString());
  }
  return nullptr;
}

std::vector<GpuFault> TaskRuntime::GpuFaults() const {
  return gpu_health_ != nullptr ? gpu_health_->Faults() : std::vector<GpuFault>{};
}

uint64_t TaskRuntime::GpuHealthVersion() const {
  return gpu_health_ != nullptr ? gpu_health_->version() : 0;
}

absl::Status TaskRuntime::InitContainers() {
  const std::string& wd = config_.work_dir;
  absl::StatusOr<OciRuntime> oci = DetectOciRuntime(config_.container_runtime, wd + "/crun");
  if (!oci.ok()) {
    // Plain tasks still run; container launches fail saying why.
    oci_.missing = std::string(oci.status().message());
    spdlog::warn("agent {}: {}", config_.name, oci_.missing);
    return absl::OkStatus();
  }
  oci_ = *std::move(oci);
  if (oci_.path.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(MakeDirs(oci_.root, 0700));
  image::ImageStoreOptions options;
  options.dir = config_.image_dir.empty() ? wd + "/images" : config_.image_dir;
  options.size_limit_bytes = config_.image_cache_bytes;
  ASSIGN_OR_RETURN(images_, image::ImageStore::Open(options));
  RETURN_IF_ERROR(MakeDirs(wd + "/containers", 0700));
  PullSettings settings{config_.registry_ca_file, config_.registry_stall_timeout};
  pulls_ = std::make_unique<ImagePulls>(*images_, settings, [this] { poller_->Wakeup(); });
  spdlog::info("agent {}: containers with {}, images in {}", config_.name, oci_.path, options.dir);
  return absl::OkStatus();
}

void TaskRuntime::EmitNotStarted(const RunId& run, TaskEventType type, TerminationReason reason,
                                 std::string message) {
  TaskEvent e;
  e.time = clock_.Now();
  e.run = run;
  e.type = type;
  e.reason = reason;
  e.message = std::move(message);
  Emit(std::move(e));
}

void TaskRuntime::StartPulled() {
  if (!pulls_) return;
  std::vector<ImagePulls::Done> done = pulls_->TakeDone();
  if (done.empty()) return;
  for (ImagePulls::Done& d : done) {
    absl::Status s = d.status.ok() ? StartRun(d.request) : d.status;
    if (!s.ok()) {
      EmitNotStarted(d.request.run, TaskEventType::kFailed, TerminationReason::kLaunchFailed,
                     std::string(s.message()));
    }
  }
  // A pull grew the cache: back within its limit (unpinned images, least recently used first).
  images_->CollectGarbage();
}

void TaskRuntime::Emit(TaskEvent e) {
  bool terminal = e.terminal();
  RunId run = e.run;
  absl::StatusOr<uint64_t> seq = outbox_->Append(std::move(e));
  if (!seq.ok()) spdlog::error("outbox: {}", seq.status().ToString());
  if (terminal) finished_.push_back(run);
}

void TaskRuntime::Reap(UniqueFd pidfd) {
  int fd = pidfd.get();
  absl::StatusOr<uint64_t> watch = poller_->Add(fd, EPOLLIN, [this, fd](uint32_t) {
    auto it = reaping_.find(fd);
    if (it == reaping_.end()) return;
    ReapPidfd(fd);
    poller_->Remove(it->second.watch);
    reaping_.erase(it);
  });
  if (!watch.ok()) return;  // the zombie is reaped when the agent exits
  reaping_[fd] = Reaping{*watch, std::move(pidfd)};
}

absl::Status TaskRuntime::Launch(const LaunchRequest& request) {
  if (!recovered_) {
    return absl::FailedPreconditionError("call Recover() before launching tasks");
  }
  RETURN_IF_ERROR(ValidateLaunchRequest(request));
  if (runners_.contains(request.run)) return absl::OkStatus();  // a retransmission
  if (pulls_ && pulls_->Waiting(request.run)) return absl::OkStatus();
  if (pulls_ && pulls_->MaybeWait(request)) return absl::OkStatus();  // once its image is here
  return StartRun(request);
}

absl::Status TaskRuntime::StartRun(const LaunchRequest& request) {
  services_.now = clock_.Now();
  RunContext ctx;
  ctx.request = request;
  ctx.key = RunKey(request.run);
  ctx.boot_id = services_.boot_id;
  std::string sandbox = SandboxHook::FindSandbox(config_.work_dir, request.run);
  if (!sandbox.empty()) {
    // Launched here before. If its supervisor never got the run request (the agent died in the
    // middle of the launch, before the task could start: no started mark), the leftovers go and
    // the launch proceeds; otherwise this run already ran.
    if (wrapper::HasStarted(sandbox)) {
      return absl::AlreadyExistsError(absl::StrCat("run ", request.run.ToString(),
                                                   " already ran on this agent; launch a new run"));
    }
    RemoveTree(sandbox).IgnoreError();
  }
  RETURN_IF_ERROR(lifecycle_.Prepare(ctx));
  ctx.final_env = lifecycle_.BuildEnv(ctx);
  RETURN_IF_ERROR(lifecycle_.Finish(ctx));
  absl::StatusOr<std::unique_ptr<TaskRunner>> runner = TaskRunner::Start(services_, ctx);
  if (!runner.ok()) {
    lifecycle_.Cleanup(ctx, CleanupKind::kRollback);
    return WithContext(runner.status(), absl::StrCat("launch of ", request.run.ToString()));
  }
  runners_[request.run] = std::move(*runner);
  return absl::OkStatus();
}

absl::Status TaskRuntime::Kill(const RunId& run, std::optional<absl::Duration> grace,
                               absl::Duration deregistration_delay) {
  if (pulls_ && pulls_->Cancel(run)) {
    EmitNotStarted(run, TaskEventType::kKilled, TerminationReason::kKilledGracefully,
                   "killed while its image was being pulled; it never started");
    return absl::OkStatus();
  }
  auto it = runners_.find(run);
  if (it == runners_.end()) return absl::OkStatus();  // unknown or finished: acknowledged
  services_.now = clock_.Now();
  it->second->Kill(grace.value_or(it->second->context().request.spec.kill_grace),
                   deregistration_delay);
  return absl::OkStatus();
}

void TaskRuntime::Reschedule(const RunId& run) {
  auto it = runners_.find(run);
  if (it == runners_.end()) return;
  TaskRunner& r = *it->second;
  absl::Time d = r.NextDeadline();
  if (d < r.scheduled) {
    r.scheduled = d;
    timers_.push({d, run});
  }
}

void TaskRuntime::RunTimers(absl::Time now) {
  for (int guard = 0; guard < 1000000 && !timers_.empty() && timers_.top().first <= now; ++guard) {
    Timer t = timers_.top();
    timers_.pop();
    auto it = runners_.find(t.second);
    if (it == runners_.end() || it->second->scheduled != t.first) continue;  // stale
    it->second->scheduled = absl::InfiniteFuture();
    it->second->OnTimer(now);
    Reschedule(t.second);
  }
}

void TaskRuntime::ReapFinished() {
  for (const RunId& run : finished_) {
    auto it = runners_.find(run);
    if (it != runners_.end() && it->second->done()) runners_.erase(it);
  }
  finished_.clear();
}

void TaskRuntime::Poll(absl::Time now) {
  services_.now = now;
  for (int i = 0; i < 64 && poller_->Dispatch(absl::ZeroDuration()) > 0; ++i) {
  }
  RunTimers(now);
  StartPulled();
  ReapFinished();
  if (now - last_sync_ >= kSyncInterval) {
    absl::Status s = Sync();
    if (!s.ok()) spdlog::error("sync: {}", s.ToString());
    last_sync_ = now;
  }
  if (now >= next_gc_) {
    next_gc_ = now + kGcInterval;
    CollectGarbage(now);
  }
  if (now >= next_pool_trim_) {
    next_pool_trim_ = now + kPoolTrimInterval;
    supervisors_->Trim();
    cgroups_->TrimReleased();
  }
}

absl::Time TaskRuntime::NextDeadline() const {
  absl::Time t = std::min(next_gc_, next_pool_trim_);
  if (!timers_.empty()) t = std::min(t, timers_.top().first);
  if (outbox_->dirty()) t = std::min(t, last_sync_ + kSyncInterval);
  return t;
}

void TaskRuntime::RunOnce(absl::Duration max_wait) {
  absl::Duration wait = std::min(max_wait, NextDeadline() - clock_.Now());
  int timeout_ms = 0;
  if (wait > absl::ZeroDuration()) {
    timeout_ms = static_cast<int>(std::min<int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))), 1 << 30));
  }
  struct pollfd pfd = {poller_->fd(), POLLIN, 0};
  ::poll(&pfd, 1, timeout_ms);
  Poll(clock_.Now());
}

absl::Status TaskRuntime::Sync() {
  RETURN_IF_ERROR(checkpoint_->Sync());
  return outbox_->Sync();
}

std::vector<TaskEvent> TaskRuntime::PendingEvents(size_t max) {
  absl::Status s = Sync();
  if (!s.ok()) {
    spdlog::error("sync before delivering events: {}", s.ToString());
    return {};  // never deliver what is not durable
  }
  last_sync_ = clock_.Now();
  return outbox_->Pending(max);
}

absl::Status TaskRuntime::Ack(uint64_t seq) { return outbox_->Ack(seq); }

size_t TaskRuntime::PendingEventCount() const { return outbox_->pending_count(); }

uint64_t TaskRuntime::LastEventSeq() const { return outbox_->last_seq(); }

}  // namespace paceline::agent
