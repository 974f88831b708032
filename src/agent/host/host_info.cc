#include "agent/host/host_info.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/file_util.h"
#include "agent/host/proc_stat.h"

extern char** environ;

namespace paceline::agent {

absl::StatusOr<std::vector<GpuDevice>> ParseNvidiaSmiCsv(absl::string_view text) {
  std::vector<GpuDevice> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, ',');
    if (f.size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nvidia-smi line ", line_no, ": want 'index, name, memory.total', got '", line, "'"));
    }
    GpuDevice d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(f[0]), &d.index) || d.index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvidia-smi line ", line_no, ": bad index '", f[0], "'"));
    }
    d.model = std::string(absl::StripAsciiWhitespace(f[1]));
    std::vector<absl::string_view> mem =
        absl::StrSplit(absl::StripAsciiWhitespace(f[2]), ' ', absl::SkipEmpty());
    int64_t amount = 0;
    if (!mem.empty() && absl::SimpleAtoi(mem[0], &amount)) {
      int64_t unit = 1;
      if (mem.size() > 1) {
        if (mem[1] == "MiB") unit = 1LL << 20;
        if (mem[1] == "GiB") unit = 1LL << 30;
        if (mem[1] == "KiB") unit = 1LL << 10;
      }
      d.memory_bytes = amount * unit;
    }  // "[N/A]" leaves 0
    out.push_back(std::move(d));
  }
  return out;
}

std::string FindInPath(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                          absl::Duration timeout) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  UniqueFd rd(p[0]), wr(p[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return ErrnoStatus(rc, absl::StrCat("spawn ", argv[0]));
  wr.Reset();
  std::string out;
  absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {rd.get(), POLLIN, 0};
    int ready = ::poll(&pfd, 1, left);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(rd.get(), buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int ws = 0;
  while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout)));
  }
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " failed (status ", ws, ")"));
  }
  return out;
}

absl::StatusOr<HostInfo> DetectHostInfo(const AgentConfig& config, const CgroupDriver& cgroups,
                                        Nvml* nvml) {
  HostInfo h;
  h.agent_name = config.name;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  h.hostname = host;
  h.labels = config.labels;
  // Every host has the label `hostname`, its name in the cluster (as Mesos agents had), unless
  // it was given another value: constraints can pin a task to a host by name.
  h.labels.emplace("hostname", config.name);
  h.port_min = config.port_min;
  h.port_max = config.port_max;
  h.isolation = cgroups.mode();
  h.isolation_detail = cgroups.Describe();
  h.switches_users = ::geteuid() == 0;

  int64_t cpu = 0;
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    cpu = CPU_COUNT(&set) * 1000LL;
  } else {
    cpu = ::sysconf(_SC_NPROCESSORS_ONLN) * 1000LL;
  }
  int64_t memory = 0;
  if (!config.memory_bytes) {
    absl::StatusOr<std::string> text = ReadFile("/proc/meminfo");
    if (!text.ok()) return text.status();
    absl::StatusOr<MemInfo> mi = ParseMeminfo(*text);
    if (!mi.ok()) return mi.status();
    memory = mi->total_bytes;
  }
  int64_t disk = 0;
  struct statvfs vfs;
  if (::statvfs(config.work_dir.c_str(), &vfs) == 0) {
    disk = static_cast<int64_t>(vfs.f_blocks) * static_cast<int64_t>(vfs.f_frsize);
  }
  if (config.gpus) {
    h.gpus = *config.gpus;
  } else if (nvml != nullptr) {
    absl::StatusOr<std::vector<GpuDevice>> gpus = nvml->Devices();
    if (!gpus.ok()) {
      return absl::Status(gpus.status().code(),
                          absl::StrCat("GPU detection through NVML: ", gpus.status().message(),
                                       "; set gpus in the agent config to skip it"));
    }
    h.gpus = *std::move(gpus);
  } else if (std::string smi = FindInPath(config.nvidia_smi); !smi.empty()) {
    absl::StatusOr<std::string> csv = RunAndCapture(
        {smi, "--query-gpu=index,name,memory.total", "--format=csv,noheader"}, absl::Seconds(20));
    if (!csv.ok()) {
      return absl::Status(csv.status().code(),
                          absl::StrCat("GPU detection: ", csv.status().message(),
                                       "; set gpus in the agent config to skip nvidia-smi"));
    }
    absl::StatusOr<std::vector<GpuDevice>> gpus = ParseNvidiaSmiCsv(*csv);
    if (!gpus.ok()) return gpus.status();
    h.gpus = *gpus;
  }
  h.total = Resources::Of(config.cpu_milli.value_or(cpu), config.memory_bytes.value_or(memory),
                          config.disk_bytes.value_or(disk),
                          static_cast<int64_t>(h.gpus.size()) * kMilliPerUnit);
  h.reserved = Resources::Of(config.reserved_cpu_milli, config.reserved_memory_bytes,
                             config.reserved_disk_bytes, 0);
  h.allocatable = SubtractClamped(h.total, h.reserved);
  return h;
}

}  // namespace paceline::agent
