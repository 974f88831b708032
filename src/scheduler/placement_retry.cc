#include "scheduler/placement_retry.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"

namespace paceline::scheduler {
namespace {

// The shape of every member of `req` when the class's bound applies to it, else nullptr.
const placement::TaskShape* UniformShape(const placement::PlacementRequest& req) {
  if (req.tasks.empty()) return nullptr;
  const placement::TaskShape* shape = req.tasks.front().shape.get();
  if (shape == nullptr || shape->gpu_milli() != 0 || shape->num_ports() != 0 ||
      !shape->max_per_host.empty()) {
    return nullptr;
  }
  for (const placement::PlacementTask& t : req.tasks) {
    if (t.previous.has_value() || t.required_host.has_value()) return nullptr;
    if (t.shape.get() != shape && (t.shape == nullptr || !(*t.shape == *shape))) return nullptr;
  }
  return shape;
}

// How many tasks asking `ask` the free capacity `free` holds.
uint64_t Holds(const Resources& free, const Resources& ask) {
  uint64_t n = std::numeric_limits<uint64_t>::max();
  for (int i = 0; i < kNumDims; ++i) {
    if (ask.at(i) <= 0) continue;
    n = std::min<uint64_t>(n, free.at(i) <= 0 ? 0 : static_cast<uint64_t>(free.at(i) / ask.at(i)));
  }
  return n;
}

}  // namespace

bool PlacementRetry::Skip(uint64_t gang, const placement::PlacementRequest& req,
                          const placement::ClusterSnapshot& snap) {
  auto it = failed_.find(gang);
  if (it == failed_.end()) return false;
  Failure& f = it->second;
  const placement::TaskShape* shape = UniformShape(req);
  std::optional<std::span<const uint32_t>> relaxed = snap.RelaxedSince(f.seen);
  if (shape == nullptr || shape->signature != f.signature || !relaxed.has_value()) {
    failed_.erase(it);
    return false;
  }
  const uint64_t size = req.tasks.size();
  for (uint32_t slot : *relaxed) {
    if (!snap.present(slot)) continue;
    f.bound += std::min<uint64_t>(
        size, Holds(snap.host_at(slot).FreeFor(shape->revocable), shape->resources));
    if (f.placed + f.bound >= size) break;
  }
  f.seen = snap.relax_seq();
  if (f.placed + f.bound >= size) {
    failed_.erase(it);
    return false;
  }
  return true;
}

void PlacementRetry::Failed(uint64_t gang, const placement::PlacementRequest& req, uint32_t placed,
                            const placement::ClusterSnapshot& snap) {
  const placement::TaskShape* shape = UniformShape(req);
  if (shape == nullptr || placed >= req.tasks.size()) {
    failed_.erase(gang);
    return;
  }
  failed_[gang] = Failure{shape->signature, placed, snap.relax_seq(), 0};
}

bool PlacementRetry::ExplainDue(uint64_t gang, absl::Time now, absl::Duration every) const {
  auto it = explained_.find(gang);
  return it == explained_.end() || now - it->second >= every;
}

const PlacementRetry::SharedWhy* PlacementRetry::Shared(uint64_t key, absl::Time now,
                                                        absl::Duration every) const {
  auto it = shared_.find(key);
  return it != shared_.end() && now - it->second.at < every ? &it->second : nullptr;
}

void PlacementRetry::Keep(const std::vector<uint64_t>& gangs, absl::Time now,
                          absl::Duration every) {
  absl::erase_if(shared_, [&](const auto& kv) { return now - kv.second.at >= every; });
  if (failed_.empty() && explained_.empty()) return;
  absl::flat_hash_set<uint64_t> keep(gangs.begin(), gangs.end());
  absl::erase_if(failed_, [&](const auto& kv) { return !keep.contains(kv.first); });
  absl::erase_if(explained_, [&](const auto& kv) { return !keep.contains(kv.first); });
}

}  // namespace paceline::scheduler
