#pragma once
// ListProber: how fast the master answers what people ask it while a benchmark loads it. One
// client on a connection of its own asks, in turn, what `paceline job list` asks (QueryJobs:
// the first page of a pool, 100 jobs) and what `paceline task list JOB` asks (ListTasks of one
// of the jobs the last page named, a different one each time), one call every `interval`, and
// keeps each call's latency.
//
//   ListProber prober(addr, token, "/scale", absl::Milliseconds(100));
//   ... run the load ...
//   ListLatencies l = prober.Stop();   // l.job_list_ms, l.task_list_ms
//
// Thread-safety: Stop (or the destructor) from the thread that made it; the calls run on a
// thread of the prober's own.

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace paceline::bench {

struct ListLatencies {
  std::vector<double> job_list_ms;   // each QueryJobs answered, in order
  std::vector<double> task_list_ms;  // each ListTasks answered, in order
  int64_t errors = 0;                // calls that failed (their latency is not kept)
  std::string first_error;
};

class ListProber {
 public:
  ListProber(std::string addr, std::string token, std::string pool, absl::Duration interval);
  ~ListProber();
  ListProber(const ListProber&) = delete;
  ListProber& operator=(const ListProber&) = delete;

  // Ends the calls (waits for the one in flight) and returns what was measured; idempotent
  // (later calls return nothing).
  ListLatencies Stop();

 private:
  void Run();

  const std::string addr_, token_, pool_;
  const absl::Duration interval_;
  absl::Notification stop_;
  ListLatencies out_;  // written by the thread until it is joined
  std::thread thread_;
};

}  // namespace paceline::bench
