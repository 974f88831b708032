#include "sim/paper/typical_pods.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_join.h"

namespace paceline::sim::paper {

TypicalPods TypicalPods::From(const std::vector<PaperPod>& trace, double popularity_percent) {
  using Key = std::tuple<int64_t, int64_t, int, std::string>;
  std::map<Key, std::pair<PaperPod, int64_t>> groups;
  for (const PaperPod& p : trace) {
    auto [it, added] = groups.try_emplace(
        Key{p.cpu_score, p.gpu_milli, p.gpus, absl::StrJoin(p.models, "|")}, p, 0);
    ++it->second.second;
  }
  std::vector<std::pair<PaperPod, int64_t>> sorted;
  for (auto& [key, group] : groups) sorted.push_back(std::move(group));
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const double wanted = popularity_percent * static_cast<double>(trace.size()) / 100.0;
  TypicalPods out;
  double covered = 0;
  for (auto& [pod, count] : sorted) {
    if (covered >= wanted) break;
    covered += static_cast<double>(count);
    out.pods_.push_back(TypicalPod{std::move(pod), static_cast<double>(count)});
  }
  for (TypicalPod& t : out.pods_) t.weight /= covered;
  return out;
}

double TypicalPods::NodeFragmentation(const PaperNode& n) const {
  const int64_t free = n.gpu_left_total();
  if (free == 0) return 0;
  double frag = 0;
  for (const TypicalPod& t : pods_) {
    const PaperPod& p = t.pod;
    if (p.gpu_milli == 0 || !n.Accessible(p) || !n.CanHostGpus(p) || n.cpu_left < p.cpu_score) {
      frag += t.weight * static_cast<double>(free);
      continue;
    }
    int64_t unusable = 0;
    for (int64_t left : n.gpu_left) {
      if (left < p.gpu_milli) unusable += left;
    }
    frag += t.weight * static_cast<double>(unusable);
  }
  return frag;
}

}  // namespace paceline::sim::paper
