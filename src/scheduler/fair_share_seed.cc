#include "scheduler/fair_share_seed.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace paceline::scheduler {
namespace {

bool Governed(const resmgr::PoolTree& tree, PoolId id) {
  return id != resmgr::kRootPool && tree.spec(tree.parent(id)).fair_share.has_value();
}

// Sums of one subtree in one hour (int128: a year of a large cluster overflows no sum).
struct HourSums {
  __int128 cpu = 0, memory = 0, gpu = 0;
};

double Over(__int128 amount_seconds, int64_t capacity) {
  return capacity > 0 ? static_cast<double>(amount_seconds) / static_cast<double>(capacity) : 0;
}

}  // namespace

std::optional<absl::Time> UsageSeedSince(const resmgr::PoolTree& tree, absl::Time now) {
  std::optional<absl::Duration> longest;
  for (PoolId id : tree.layout().id) {
    const std::optional<FairShareSpec>& p = tree.spec(id).fair_share;
    if (p.has_value() && !tree.IsLeaf(id))
      longest = std::max(longest.value_or(p->half_life), p->half_life);
  }
  if (!longest.has_value()) return std::nullopt;
  return now - 10 * *longest;
}

std::vector<UsageSeed> DecayedUsageFromHours(const resmgr::PoolTree& tree,
                                             std::span<const records::UsageRecord> hours,
                                             const Resources& capacity, absl::Time now) {
  // By governed pool, then hour: the subtree's sums.
  std::map<uint32_t, std::map<absl::Time, HourSums>> sums;
  for (const records::UsageRecord& r : hours) {
    std::optional<PoolId> id = tree.Find(r.pool);
    if (!id.has_value()) continue;
    for (PoolId at = *id; at != resmgr::kRootPool; at = tree.parent(at)) {
      if (!Governed(tree, at)) continue;
      HourSums& s = sums[at.value()][r.hour];
      s.cpu += r.cpu_milli_seconds;
      s.memory += r.memory_byte_seconds;
      s.gpu += r.gpu_milli_seconds;
    }
  }
  std::vector<UsageSeed> out;
  for (PoolId id : tree.layout().id) {
    auto it = sums.find(id.value());
    if (it == sums.end()) continue;
    const double h = absl::ToDoubleSeconds(tree.spec(tree.parent(id)).fair_share->half_life);
    double usage = 0;
    for (const auto& [hour, s] : it->second) {
      const double held = std::min({3600.0, std::max({Over(s.cpu, capacity[Dim::kCpu]),
                                                      Over(s.memory, capacity[Dim::kMemory]),
                                                      Over(s.gpu, capacity[Dim::kGpu])})});
      const double age = std::max(0.0, absl::ToDoubleSeconds(now - (hour + absl::Minutes(30))));
      usage += held * std::exp2(-age / h);
    }
    out.push_back({id, usage});
  }
  return out;
}

}  // namespace paceline::scheduler
