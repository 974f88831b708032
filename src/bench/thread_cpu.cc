#include "bench/thread_cpu.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace paceline::bench {
namespace {

std::string RoleOf(absl::string_view name) {
  if (name == "pl-loop") return "loop";
  if (name == "pl-store-writer") return "writer";
  if (name == "pl-fleet") return "fleet";
  return "other";
}

// utime + stime of one thread, from its stat line (fields 14 and 15, after the command in
// parentheses, which may hold spaces).
bool ThreadTime(const std::filesystem::path& task, absl::Duration& out) {
  std::ifstream in(task / "stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(line).substr(close + 2), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): utime is field 14, stime field 15.
  int64_t utime = 0, stime = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[11], &utime) || !absl::SimpleAtoi(f[12], &stime)) {
    return false;
  }
  out =
      absl::Seconds(static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK)));
  return true;
}

}  // namespace

ThreadCpu ThreadCpu::Sample() {
  ThreadCpu s;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.total = absl::DurationFromTimeval(ru.ru_utime) + absl::DurationFromTimeval(ru.ru_stime);
  absl::Duration named;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    absl::Duration t;
    if (!std::getline(comm, name) || !ThreadTime(task.path(), t)) continue;
    const std::string role = RoleOf(name);
    if (role == "other") continue;
    s.by_role[role] += t;
    named += t;
  }
  s.by_role["other"] = std::max(absl::ZeroDuration(), s.total - named);
  return s;
}

ThreadCpu ThreadCpu::Since(const ThreadCpu& before) const {
  ThreadCpu d;
  d.total = total - before.total;
  for (const auto& [role, t] : by_role) {
    auto it = before.by_role.find(role);
    d.by_role[role] = std::max(
        absl::ZeroDuration(), t - (it == before.by_role.end() ? absl::ZeroDuration() : it->second));
  }
  return d;
}

ThreadCpu ThreadCpu::WithClients(absl::Duration clients) const {
  ThreadCpu out = *this;
  out.by_role["clients"] = clients;
  out.by_role["other"] = std::max(absl::ZeroDuration(), out.by_role["other"] - clients);
  return out;
}

absl::Duration ThisThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

}  // namespace paceline::bench
