// TaskRuntime: recovery after an agent restart, and housekeeping (sandbox retention).

#include <dirent.h>
#include <sys/stat.h>

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/sandbox_hook.h"
#include "agent/task_runtime.h"
#include "agent/wrapper_protocol.h"
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

}  // namespace

absl::Status TaskRuntime::Recover() {
  if (recovered_) return absl::OkStatus();
  services_.now = clock_.Now();
  std::vector<RunContext> loaded = checkpoint_->TakeLoaded();
  std::set<std::string> keys;
  size_t adopted = 0;
  for (RunContext& ctx : loaded) {
    keys.insert(ctx.key);
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
    if (keys.contains(name)) continue;
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
  if (config_.sandbox_retention <= absl::ZeroDuration()) return;
  std::string runs_dir = absl::StrCat(config_.work_dir, "/runs");
  DIR* dir = ::opendir(runs_dir.c_str());
  if (dir == nullptr) return;
  std::vector<RunId> expired;
  while (struct dirent* e = ::readdir(dir)) {
    std::optional<RunId> run = ParseRunKey(e->d_name);
    if (!run || runners_.contains(*run)) continue;
    struct stat st;
    std::string status = absl::StrCat(runs_dir, "/", e->d_name, "/", wrapper::kStatusFile);
    if (::stat(status.c_str(), &st) != 0) continue;
    if (absl::FromTimeT(st.st_mtime) + config_.sandbox_retention < now) expired.push_back(*run);
  }
  ::closedir(dir);
  for (const RunId& run : expired) {
    RemoveTree(SandboxHook::SandboxPath(config_.work_dir, run)).IgnoreError();
    RemoveTree(SandboxHook::RunDirPath(config_.work_dir, run)).IgnoreError();
  }
  if (!expired.empty()) spdlog::info("removed {} expired sandboxes", expired.size());
}

}  // namespace paceline::agent
