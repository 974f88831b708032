#include "records/usage.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paceline::records {
namespace {

auto KeyOf(const UsageRecord& r) { return std::tie(r.hour, r.pool, r.job, r.owner, r.user); }

// The amount of `per_second` held for `elapsed` since the start, rounded down: the share of an
// interval is the difference of two of these, so that the shares add up to the whole.
int64_t Amount(int64_t per_second, absl::Duration elapsed) {
  const __int128 us = absl::ToInt64Microseconds(elapsed);
  return static_cast<int64_t>(static_cast<__int128>(per_second) * us / 1'000'000);
}

bool InSubtree(const std::string& subtree, const std::string& pool) {
  if (subtree.empty() || pool == subtree) return true;
  const std::string below = absl::EndsWith(subtree, "/") ? subtree : absl::StrCat(subtree, "/");
  return absl::StartsWith(pool, below);
}

}  // namespace

bool SameUsageKey(const UsageRecord& a, const UsageRecord& b) { return KeyOf(a) == KeyOf(b); }

bool UsageKeyLess(const UsageRecord& a, const UsageRecord& b) { return KeyOf(a) < KeyOf(b); }

void AddUsage(UsageRecord& into, const UsageRecord& add) {
  into.job_name = add.job_name;
  into.cpu_milli_seconds += add.cpu_milli_seconds;
  into.memory_byte_seconds += add.memory_byte_seconds;
  into.gpu_milli_seconds += add.gpu_milli_seconds;
  into.tasks += add.tasks;
}

absl::Time HourOf(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) return t;
  return absl::UnixEpoch() + absl::Floor(t - absl::UnixEpoch(), absl::Hours(1));
}

std::vector<UsageRecord> SplitByHour(const RunUsage& run) {
  std::vector<UsageRecord> out;
  if (run.started == absl::InfinitePast() || run.ended == absl::InfinitePast() ||
      run.started > run.ended) {
    return out;
  }
  const Resources& r = run.held;
  for (absl::Time hour = HourOf(run.started); hour <= run.ended; hour += absl::Hours(1)) {
    const absl::Time from = std::max(hour, run.started);
    const absl::Time to = std::min(hour + absl::Hours(1), run.ended);
    if (to == from && to != run.ended) continue;
    UsageRecord u;
    u.hour = hour;
    u.pool = run.pool;
    u.job = run.job;
    u.owner = run.owner;
    u.user = run.user;
    u.job_name = run.job_name;
    const absl::Duration a = from - run.started;
    const absl::Duration b = to - run.started;
    u.cpu_milli_seconds = Amount(r.cpu_milli(), b) - Amount(r.cpu_milli(), a);
    u.memory_byte_seconds = Amount(r.memory_bytes(), b) - Amount(r.memory_bytes(), a);
    u.gpu_milli_seconds = Amount(r.gpu_milli(), b) - Amount(r.gpu_milli(), a);
    out.push_back(std::move(u));
    if (to == run.ended) break;
  }
  out.back().tasks = 1;
  return out;
}

bool UsageMatches(const UsageRecord& r, const UsageQuery& q) {
  return r.hour >= HourOf(q.since) && r.hour < q.until && InSubtree(q.pool, r.pool);
}

std::vector<UsageTotal> SumUsage(const std::vector<UsageRecord>& rows, UsageGroup by, bool hourly) {
  std::map<std::pair<absl::Time, std::string>, UsageTotal> sums;
  for (const UsageRecord& r : rows) {
    std::string key;
    switch (by) {
      case UsageGroup::kPool:
        key = r.pool;
        break;
      case UsageGroup::kUser:
        key = r.user;
        break;
      case UsageGroup::kOwner:
        key = r.owner;
        break;
      case UsageGroup::kJob:
        key = absl::StrCat(r.job.value());
        break;
    }
    const absl::Time hour = hourly ? r.hour : absl::InfinitePast();
    UsageTotal& t = sums[{hour, key}];
    t.key = key;
    t.hour = hour;
    if (by == UsageGroup::kJob) {
      t.job_name = r.job_name;
      t.pool = r.pool;
    }
    t.cpu_seconds += static_cast<double>(r.cpu_milli_seconds) / 1000.0;
    t.memory_byte_seconds += static_cast<double>(r.memory_byte_seconds);
    t.gpu_seconds += static_cast<double>(r.gpu_milli_seconds) / 1000.0;
    t.tasks += r.tasks;
  }
  std::vector<UsageTotal> out;
  out.reserve(sums.size());
  for (auto& [k, t] : sums) out.push_back(std::move(t));
  std::stable_sort(out.begin(), out.end(), [](const UsageTotal& a, const UsageTotal& b) {
    if (a.hour != b.hour) return a.hour < b.hour;
    if (a.cpu_seconds != b.cpu_seconds) return a.cpu_seconds > b.cpu_seconds;
    return a.key < b.key;
  });
  return out;
}

}  // namespace paceline::records
