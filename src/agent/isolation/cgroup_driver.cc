#include "agent/isolation/cgroup_driver.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/file_util.h"

namespace paceline::agent {

absl::string_view CgroupModeName(CgroupMode m) {
  switch (m) {
    case CgroupMode::kNone:
      return "none";
    case CgroupMode::kV1:
      return "v1";
    case CgroupMode::kV2:
      return "v2";
  }
  return "?";
}

namespace cgroup_internal {

std::vector<pid_t> ParsePids(absl::string_view text) {
  std::vector<pid_t> pids;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    pid_t pid = 0;
    if (absl::SimpleAtoi(line, &pid) && pid > 0) pids.push_back(pid);
  }
  return pids;
}

int64_t KeyedValue(absl::string_view text, absl::string_view key, int64_t fallback) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, ' ');
    int64_t v = 0;
    if (kv.first == key && absl::SimpleAtoi(kv.second, &v)) return v;
  }
  return fallback;
}

int64_t CpuWeightV2(int64_t cpu_milli) {
  if (cpu_milli <= 0) return 100;
  return std::clamp<int64_t>(cpu_milli / 10, 1, 10000);
}

int64_t CpuSharesV1(int64_t cpu_milli) {
  if (cpu_milli <= 0) return 1024;
  return std::clamp<int64_t>(cpu_milli * 1024 / 1000, 2, 262144);
}

int64_t CpuQuotaUsec(int64_t cpu_milli) {
  return std::max<int64_t>(cpu_milli * kCpuPeriodUsec / 1000, 1000);
}

}  // namespace cgroup_internal

namespace {

class NullCgroupDriver final : public CgroupDriver {
 public:
  explicit NullCgroupDriver(std::string reason) : reason_(std::move(reason)) {}
  CgroupMode mode() const override { return CgroupMode::kNone; }
  std::string Describe() const override { return absl::StrCat("none: ", reason_); }
  absl::StatusOr<std::string> Create(const std::string& name, const CgroupLimits&) override {
    return name;
  }
  std::vector<std::string> ProcsFiles(const std::string&) const override { return {}; }
  std::vector<std::string> SupervisorProcsFiles() const override { return {}; }
  absl::StatusOr<std::vector<pid_t>> Pids(const std::string&) const override {
    return std::vector<pid_t>{};
  }
  void KillAll(const std::string&) override {}
  absl::StatusOr<CgroupStats> Stats(const std::string&) const override {
    return absl::UnimplementedError("no cgroups");
  }
  absl::StatusOr<uint64_t> OomKills(const std::string&) const override {
    return absl::UnimplementedError("no cgroups");
  }
  absl::Status Remove(const std::string&) override { return absl::OkStatus(); }
  std::vector<std::string> List() const override { return {}; }

 private:
  std::string reason_;
};

}  // namespace

std::unique_ptr<CgroupDriver> MakeNullCgroupDriver(std::string reason) {
  return std::make_unique<NullCgroupDriver>(std::move(reason));
}

absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupDriver(const AgentConfig& config) {
  switch (config.cgroup) {
    case CgroupPreference::kNone:
      return MakeNullCgroupDriver("disabled by configuration");
    case CgroupPreference::kV2:
      return CreateCgroupV2Driver(config);
    case CgroupPreference::kV1:
      return CreateCgroupV1Driver(config);
    case CgroupPreference::kAuto:
      break;
  }
  if (PathExists(absl::StrCat(config.cgroup_root, "/cgroup.controllers"))) {
    absl::StatusOr<std::unique_ptr<CgroupDriver>> v2 = CreateCgroupV2Driver(config);
    if (v2.ok()) return v2;
    return MakeNullCgroupDriver(absl::StrCat("cgroup v2 not usable: ", v2.status().message()));
  }
  absl::StatusOr<std::unique_ptr<CgroupDriver>> v1 = CreateCgroupV1Driver(config);
  if (v1.ok()) return v1;
  return MakeNullCgroupDriver(absl::StrCat("cgroup v1 not usable: ", v1.status().message()));
}

}  // namespace paceline::agent
