#pragma once
// Where a benchmark's CPU goes: the CPU time of this process's threads by role, from
// /proc/self/task/*/{comm,stat} (user + system), and of the whole process (getrusage, which
// also counts threads that have exited). Roles by thread name:
//   loop    "pl-loop", the master's event loop (the scheduler core)
//   writer  "pl-store-writer", the store's group committer
//   fleet   "pl-fleet", the emulated hosts' threads
//   clients the benchmark's clients (building and sending their requests), as their threads
//           measured themselves (ThisThreadCpu), since they end before the last sample
//   other   the process total minus the above: the API's handler threads (gRPC may start and
//           end them as calls come, so some are gone when sampled) and gRPC's own threads,
//           on both sides of its streams
// Linux only; a thread that cannot be read is counted under `other`.
//
// Thread-safety: Sample() may be called from any thread.

#include <map>
#include <string>

#include "absl/time/time.h"

namespace paceline::bench {

struct ThreadCpu {
  std::map<std::string, absl::Duration> by_role;  // loop, writer, fleet, clients, other
  absl::Duration total;

  static ThreadCpu Sample();
  // What was spent between `before` and this sample.
  ThreadCpu Since(const ThreadCpu& before) const;
  // The same with `clients` (measured by the clients' threads themselves, which end before the
  // sample) taken out of `other`.
  ThreadCpu WithClients(absl::Duration clients) const;
};

// The CPU time of the calling thread so far.
absl::Duration ThisThreadCpu();

}  // namespace paceline::bench
