#pragma once
// Readers and parsers for the parts of /proc the agent needs: a process's identity and CPU times
// (/proc/<pid>/stat), host CPU times (/proc/stat), memory (/proc/meminfo) and the boot id.
// The Parse* functions are pure (tested on fixed text); the Read* functions do the I/O.
//
// A process is identified by (pid, start time): field 22 of /proc/<pid>/stat, in clock ticks
// since boot. Together with the boot id this survives pid reuse across agent restarts.
//
// Thread-safety: free functions without shared state.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::agent {

struct PidStat {
  pid_t pid = 0;
  char state = '?';  // R S D Z T ...; 'Z' = exited, not yet reaped
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t start_ticks = 0;  // field 22
  int64_t rss_pages = 0;     // field 24
};

// Parses the text of /proc/<pid>/stat (the command name may contain spaces and parentheses).
absl::StatusOr<PidStat> ParsePidStat(absl::string_view text);
absl::StatusOr<PidStat> ReadPidStat(pid_t pid);

// True when `pid` exists, is not a zombie, and started at `start_ticks`.
bool ProcessAlive(pid_t pid, uint64_t start_ticks);

struct HostCpuTimes {
  uint64_t busy_ticks = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total_ticks = 0;  // busy + idle + iowait
};
// Parses the "cpu " line of /proc/stat.
absl::StatusOr<HostCpuTimes> ParseProcStat(absl::string_view text);

struct MemInfo {
  int64_t total_bytes = 0;
  int64_t available_bytes = 0;
};
absl::StatusOr<MemInfo> ParseMeminfo(absl::string_view text);

// Clock ticks per second (sysconf(_SC_CLK_TCK)).
int64_t ClockTicksPerSecond();
// /proc/sys/kernel/random/boot_id, or "" when unreadable.
std::string BootId();

}  // namespace paceline::agent
