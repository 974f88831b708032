#pragma once
// Usage accounting: what the runs of jobs held, as the store keeps it (docs/operations.md,
// "Usage accounting").
//
// A run's usage is its allocated resources (the task's cpu, memory and gpu, as its run's job
// version asked for them) times the time it held them, from the moment it started RUNNING
// (TaskRecord::started_at) to the moment it ended (finished_at), whatever its end: succeeded,
// failed, killed, preempted or lost. A run that never started RUNNING is not counted.
//
// The store keeps sums by hour: one UsageRecord per (hour, pool, job, owner, user) with the
// usage that fell in that hour. A run that spans hours is split at the hour boundaries
// (SplitByHour); its task count goes to the hour it ended in. The table stays bounded by
// retention (hours × jobs that ran in them), and a query of a time range reads whole hours.
//
// Sums are exact integers: cpu in millicore·seconds, memory in byte·seconds, gpu in
// milli-GPU·seconds, each split share rounded down so that a run's shares add up to its total.
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"

namespace paceline::records {

struct UsageRecord {
  absl::Time hour = absl::UnixEpoch();  // the start of the hour (UTC): the key's first part
  std::string pool;
  JobId job;
  std::string owner;     // the job spec's owner ("" when the spec names none)
  std::string user;      // who created the job (JobRecord::owner; "" without authentication)
  std::string job_name;  // not part of the key: the latest written
  int64_t cpu_milli_seconds = 0;    // millicores × seconds
  int64_t memory_byte_seconds = 0;  // bytes × seconds
  int64_t gpu_milli_seconds = 0;    // milli-GPUs × seconds
  int64_t tasks = 0;                // runs that ended in this hour
  friend bool operator==(const UsageRecord&, const UsageRecord&) = default;
};

// Whether a and b have the same key (hour, pool, job, owner, user).
bool SameUsageKey(const UsageRecord& a, const UsageRecord& b);
// Orders by key: hour, pool (bytes), job, owner, user. The stores list usage in this order.
bool UsageKeyLess(const UsageRecord& a, const UsageRecord& b);
// Adds the sums of `add` to `into` (same key) and takes its job name.
void AddUsage(UsageRecord& into, const UsageRecord& add);

// The start of the hour `t` falls in.
absl::Time HourOf(absl::Time t);

// One ended run, as the core saw it end.
struct RunUsage {
  std::string pool;
  JobId job;
  std::string job_name;
  std::string owner;
  std::string user;
  Resources held;                             // the run's allocation (cpu, memory, gpu are counted)
  absl::Time started = absl::InfinitePast();  // when it started RUNNING
  absl::Time ended = absl::InfinitePast();
};

// The run's usage, one record per hour it overlapped, oldest first, its task count in the
// last. Empty when it never started (started is InfinitePast or later than ended).
std::vector<UsageRecord> SplitByHour(const RunUsage& run);

// Which usage a store lists: hours in [HourOf(since), until), pools in `pool`'s subtree.
struct UsageQuery {
  absl::Time since = absl::InfinitePast();
  absl::Time until = absl::InfiniteFuture();
  std::string pool;  // this pool or below it; "" = every pool
};
bool UsageMatches(const UsageRecord& r, const UsageQuery& q);

// Sums of usage grouped one way, for the API and the CLI.
enum class UsageGroup { kPool, kUser, kJob, kOwner };
struct UsageTotal {
  std::string key;       // the pool, the user, the owner, or the job's id in decimal
  std::string job_name;  // kJob: the job's name
  std::string pool;      // kJob: the job's pool
  absl::Time hour = absl::InfinitePast();  // with hourly sums: the hour; else InfinitePast
  double cpu_seconds = 0;                  // core·seconds
  double memory_byte_seconds = 0;
  double gpu_seconds = 0;  // GPU·seconds
  int64_t tasks = 0;
  friend bool operator==(const UsageTotal&, const UsageTotal&) = default;
};
// The sums of `rows` by `by` (and by hour when `hourly`), ordered by hour, then by the most
// cpu·seconds first, then by key.
std::vector<UsageTotal> SumUsage(const std::vector<UsageRecord>& rows, UsageGroup by, bool hourly);

}  // namespace paceline::records
