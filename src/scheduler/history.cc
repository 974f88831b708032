#include "scheduler/history.h"

namespace paceline::scheduler {

bool History::Due(absl::Time now) const {
  if (!enabled()) return false;
  return cluster_.empty() || now - cluster_.back().at >= config_.period;
}

void History::Add(const ClusterPoint& cluster,
                  const std::vector<std::pair<std::string, PoolPoint>>& pools) {
  if (!enabled()) return;
  cluster_.push_back(cluster);
  while (cluster_.size() > config_.keep) cluster_.pop_front();
  for (const auto& [path, point] : pools) pools_[path].push_back(point);
  // A pool's window is the cluster's: drop the points older than the oldest cluster point,
  // and the pools left with none.
  const absl::Time oldest = cluster_.front().at;
  for (auto it = pools_.begin(); it != pools_.end();) {
    std::deque<PoolPoint>& points = it->second;
    while (!points.empty() && points.front().at < oldest) points.pop_front();
    if (points.empty()) {
      pools_.erase(it++);
    } else {
      ++it;
    }
  }
}

std::vector<PoolPoint> History::pool(absl::string_view path) const {
  auto it = pools_.find(path);
  if (it == pools_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace paceline::scheduler
