#pragma once
// History: what the cluster and each pool looked like over a recent window — one point per
// `period` of the core's time, the newest `keep` points (an hour at the master's default) —
// for the UI's charts (ClusterService.GetHistory). Only in memory: a master that starts or
// takes over begins with an empty history. SchedulerCore::RunCycle feeds it when a point is
// due; a period of zero turns it off (the simulator's default).
//
// A pool's points are kept by path while they are inside the window; a pool deleted (or
// renamed) keeps its old points until they age out.
//
// Thread-safety: single-threaded; not thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/resources.h"

namespace paceline::scheduler {

struct HistoryConfig {
  absl::Duration period = absl::ZeroDuration();  // zero: keep no history
  size_t keep = 360;
};

struct ClusterPoint {
  absl::Time at;
  uint32_t placed = 0;   // tasks placed since the previous point
  uint32_t pending = 0;  // tasks PENDING or READY
  uint32_t running = 0;  // tasks LAUNCHING or RUNNING
  Resources capacity;    // of the connected hosts
  Resources allocated;   // every pool's allocation, all classes
};

struct PoolPoint {
  absl::Time at;
  Resources entitlement;
  Resources allocation;
  Resources demand;
};

class History {
 public:
  explicit History(HistoryConfig config) : config_(config) {}

  bool enabled() const { return config_.period > absl::ZeroDuration() && config_.keep > 0; }
  absl::Duration period() const { return config_.period; }
  // Whether a point is due at `now`: the first one at once, then one per period.
  bool Due(absl::Time now) const;
  // Adds the points of one moment (cluster.at); drops what fell out of the window.
  void Add(const ClusterPoint& cluster,
           const std::vector<std::pair<std::string, PoolPoint>>& pools);

  // Oldest first.
  const std::deque<ClusterPoint>& cluster() const { return cluster_; }
  // The pool's points, oldest first; empty for a path never seen in the window.
  std::vector<PoolPoint> pool(absl::string_view path) const;

 private:
  HistoryConfig config_;
  std::deque<ClusterPoint> cluster_;
  absl::flat_hash_map<std::string, std::deque<PoolPoint>> pools_;
};

}  // namespace paceline::scheduler
