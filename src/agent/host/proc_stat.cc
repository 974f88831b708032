#include "agent/host/proc_stat.h"

#include <unistd.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/file_util.h"

namespace paceline::agent {

absl::StatusOr<PidStat> ParsePidStat(absl::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) {
    return absl::InvalidArgumentError("malformed /proc/<pid>/stat: no (comm)");
  }
  PidStat st;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text.substr(0, open)), &st.pid)) {
    return absl::InvalidArgumentError("malformed /proc/<pid>/stat: pid");
  }
  // Fields after ")": 3=state 4=ppid 5=pgrp 6=session ... 14=utime 15=stime ... 22=starttime
  // 23=vsize 24=rss. fields[0] is field 3.
  std::vector<absl::string_view> f = absl::StrSplit(text.substr(close + 1), ' ', absl::SkipEmpty());
  if (f.size() < 22) return absl::InvalidArgumentError("malformed /proc/<pid>/stat: too short");
  st.state = f[0].empty() ? '?' : f[0][0];
  bool ok = absl::SimpleAtoi(f[1], &st.ppid) && absl::SimpleAtoi(f[2], &st.pgrp) &&
            absl::SimpleAtoi(f[3], &st.session) && absl::SimpleAtoi(f[11], &st.utime_ticks) &&
            absl::SimpleAtoi(f[12], &st.stime_ticks) && absl::SimpleAtoi(f[19], &st.start_ticks) &&
            absl::SimpleAtoi(absl::StripAsciiWhitespace(f[21]), &st.rss_pages);
  if (!ok) return absl::InvalidArgumentError("malformed /proc/<pid>/stat: numbers");
  return st;
}

absl::StatusOr<PidStat> ReadPidStat(pid_t pid) {
  absl::StatusOr<std::string> text = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!text.ok()) return text.status();
  return ParsePidStat(*text);
}

bool ProcessAlive(pid_t pid, uint64_t start_ticks) {
  if (pid <= 0) return false;
  absl::StatusOr<PidStat> st = ReadPidStat(pid);
  return st.ok() && st->start_ticks == start_ticks && st->state != 'Z' && st->state != 'X';
}

absl::StatusOr<HostCpuTimes> ParseProcStat(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "cpu ")) continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    // cpu user nice system idle iowait irq softirq steal [guest guest_nice]
    if (f.size() < 8) break;
    uint64_t v[8] = {};
    for (size_t i = 1; i < 9 && i < f.size(); ++i) {
      if (!absl::SimpleAtoi(f[i], &v[i - 1])) {
        return absl::InvalidArgumentError("malformed /proc/stat cpu line");
      }
    }
    HostCpuTimes t;
    t.busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.total_ticks = t.busy_ticks + v[3] + v[4];
    return t;
  }
  return absl::InvalidArgumentError("/proc/stat has no 'cpu ' line");
}

absl::StatusOr<MemInfo> ParseMeminfo(absl::string_view text) {
  MemInfo m;
  bool have_total = false;
  bool have_available = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 2) continue;
    int64_t kib = 0;
    if (!absl::SimpleAtoi(f[1], &kib)) continue;
    if (f[0] == "MemTotal:") {
      m.total_bytes = kib * 1024;
      have_total = true;
    } else if (f[0] == "MemAvailable:") {
      m.available_bytes = kib * 1024;
      have_available = true;
    }
  }
  if (!have_total) return absl::InvalidArgumentError("/proc/meminfo has no MemTotal");
  if (!have_available) m.available_bytes = m.total_bytes;
  return m;
}

int64_t ClockTicksPerSecond() {
  static const int64_t ticks = [] {
    long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<int64_t>(t) : int64_t{100};
  }();
  return ticks;
}

std::string BootId() {
  absl::StatusOr<std::string> id = ReadFile("/proc/sys/kernel/random/boot_id");
  if (!id.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(*id));
}

}  // namespace paceline::agent
