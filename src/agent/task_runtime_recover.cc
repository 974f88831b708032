// TaskRuntime: recovery after an agent restart, and housekeeping (sandbox retention).

#include <dirent.h>
#include <sys/stat.h>

#include <unistd.h>

#include <functional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/launch/sandbox_hook.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/task_runtime.h"
#include "spdlog/spdlog.h"

namespace paceline::agent {
namespace {

std::optional<RunId> ParseRunKey(absl::string_view key) {
  std::vector<absl::string_view> f = absl::StrSplit(key, '_');
  uint64_t job = 0;
  uint32_t instance = 0, run = 0;
  if (f.size() != 3 || !absl::SimpleAtoi(f[0], &job) || !absl::SimpleAtoi(f[1], &instance) ||
      !absl::SimpleAtoi(f[2], &run)) {
    return std::nullopt;
  }
  return RunId{TaskId{JobId(job), instance}, run};
}

// The subdirectories of `path` whose names `keep` accepts.
std::vector<std::string> ListDirs(const std::string& path,
                                  const std::function<bool(const char*)>& keep) {
  std::vector<std::string> out;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return out;
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_type == DT_DIR && keep(e->d_name)) out.push_back(e->d_name);
  }
  ::closedir(dir);
  return out;
}

std::vector<std::string> ListNumericDirs(const std::string& path) {
  return ListDirs(path, [](const char* name) {
    uint64_t n = 0;
    return absl::SimpleAtoi(name, &n);
  });
}

}  // namespace

absl::Status TaskRuntime::Recover() {
  if (recovered_) return absl::OkStatus();
  services_.now = clock_.Now();
  std::vector<RunContext> loaded = checkpoint_->TakeLoaded();
  std::set<std::string> cgroups;  // of the recovered runs
  size_t adopted = 0;
  for (RunContext& ctx : loaded) {
    if (!ctx.cgroup.empty()) cgroups.insert(ctx.cgroup);
    RunId run = ctx.run();
    absl::Status s = lifecycle_.Recover(ctx);
    if (!s.ok()) spdlog::warn("{}", s.ToString());
    std::unique_ptr<TaskRunner> r = TaskRunner::Recover(services_, std::move(ctx));
    if (!r->done()) ++adopted;
    runners_[run] = std::move(r);
    Reschedule(run);
  }
  // Cgroups nobody owns (the agent died in the middle of a launch or a cleanup).
  for (const std::string& name : cgroups_->List()) {
    if (cgroups.contains(name)) continue;
    cgroups_->KillAll(name);
    cgroups_->Remove(name).IgnoreError();
  }
  ReapFinished();
  recovered_ = true;
  spdlog::info("agent {}: recovered {} runs ({} still running)", config_.name, loaded.size(),
               adopted);
  return Sync();
}

void TaskRuntime::CollectGarbage(absl::Time now) {
  // Images whose last task ended since (or that `paceline image load` added) count too.
  if (images_) images_->CollectGarbage();
  if (config_.sandbox_retention <= absl::ZeroDuration()) return;
  // A finished run's sandbox expires `sandbox_retention` after its last change (the task's last
  // output): sandboxes/<job>_<instance>_<run>, and sandboxes/<job>/<instance>/<run> of agents
  // before that layout.
  std::string root = absl::StrCat(config_.work_dir, "/sandboxes");
  size_t removed = 0;
  auto expire = [&](const std::string& sandbox, const RunId& run) {
    if (runners_.contains(run)) return;
    absl::Time last = absl::InfinitePast();
    for (const std::string& p : {sandbox, sandbox + "/stdout", sandbox + "/stderr"}) {
      struct stat st;
      if (::stat(p.c_str(), &st) == 0) last = std::max(last, absl::FromTimeT(st.st_mtime));
    }
    if (last + config_.sandbox_retention >= now) return;
    RemoveTree(sandbox).IgnoreError();
    std::string state = SandboxHook::RunStatePath(config_.work_dir, run);
    for (const char* suffix :
         {wrapper::kStdoutBaseSuffix, wrapper::kStderrBaseSuffix, wrapper::kStatusSuffix}) {
      ::unlink(absl::StrCat(state, suffix).c_str());
    }
    ++removed;
  };
  for (const std::string& name : ListDirs(root, [](const char*) { return true; })) {
    if (std::optional<RunId> run = ParseRunKey(name)) expire(absl::StrCat(root, "/", name), *run);
  }
  for (const std::string& job : ListNumericDirs(root)) {
    std::string job_dir = absl::StrCat(root, "/", job);
    for (const std::string& instance : ListNumericDirs(job_dir)) {
      std::string instance_dir = absl::StrCat(job_dir, "/", instance);
      for (const std::string& run_name : ListNumericDirs(instance_dir)) {
        std::optional<RunId> run = ParseRunKey(absl::StrCat(job, "_", instance, "_", run_name));
        if (run) expire(absl::StrCat(instance_dir, "/", run_name), *run);
      }
      ::rmdir(instance_dir.c_str());  // only when empty
    }
    ::rmdir(job_dir.c_str());
  }
  if (removed > 0) spdlog::info("removed {} expired sandboxes", removed);
}

}  // namespace paceline::agent
