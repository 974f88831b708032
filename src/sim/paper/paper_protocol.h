#pragma once
// The FGD paper's experimental protocol (its artifact's Simulate(), SortClusterPods,
// TunePodsByNodeTotalResource, syncClusterResourceList and experiments/analysis), the parts
// that do not depend on the policy: the arrival sequence, the order in which equal scores are
// broken, and the measure. docs/sim.md ("The FGD paper's protocol") cites each source.
//
// Arrivals (BuildArrivals), for one seed: the trace's tasks sorted by name are shuffled; then,
// while the GPU they ask in total is below `ratio` x the cluster's GPU capacity, tasks drawn
// uniformly with replacement from the name-sorted list are appended, and drawing stops at the
// first task whose per-device ask would pass the target (the artifact compares the per-device
// milli-GPUs, not the task's total, and so may end a little past the target). Had the tasks
// asked more than the target, tasks drawn at random would be removed until they do not. Every
// arrival is placed once; a task that fits no node fails and stays failed; nothing leaves.
//
// Node order (NodeRanks): the nodes sorted by name get a random permutation of 0..n-1 as their
// rank; among equal scores the node with the lowest rank wins (the artifact prefixes each
// node's name with its rank and breaks ties by the smallest name).
//
// The measure (ArrivalCurve): after every arrival, the GPU that arrived and the GPU allocated,
// both in % of capacity (placed or not, an arrival counts as arrived). The value at an
// integer percent P is the mean allocation over the arrivals whose arrived % rounds (half to
// even) to P, each rounded to 2 decimals; with none, over those that round to P-1..P+1.
// "Unallocated GPU at 100 % arrived" is 100 minus that mean at P = 100.
//
// Thread-safety: pure functions and value types.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/fill.h"
#include "sim/paper/paper_model.h"
#include "sim/paper/seeded_random.h"

namespace paceline::sim::paper {

struct Arrivals {
  std::vector<size_t> order;  // indices into the name-sorted task list, in arrival order
  size_t shuffled = 0;        // how many of them are the shuffled trace itself
};

// `by_name`: the trace's tasks sorted by name. Draws from `random` in a fixed order: the
// shuffle, then the draws with replacement (or the removals).
Arrivals BuildArrivals(const std::vector<PaperPod>& by_name, int64_t gpu_capacity_milli,
                       double ratio, SeededRandom& random);

// rank[i] of node i (nodes sorted by name): a uniformly random permutation of 0..n-1.
std::vector<uint32_t> NodeRanks(size_t n, SeededRandom& random);

// The winner among nodes 0..rank.size()-1 (the artifact's selectHost): the highest score, and
// among equal scores the lowest rank. `score(i)` < 0 marks a node where the pod does not fit;
// nullopt when it fits nowhere.
template <typename ScoreFn>
std::optional<size_t> BestNode(const std::vector<uint32_t>& rank, ScoreFn&& score) {
  std::optional<size_t> best;
  int64_t best_score = -1;
  for (size_t i = 0; i < rank.size(); ++i) {
    const int64_t s = score(i);
    if (s < 0) continue;
    if (!best || s > best_score || (s == best_score && rank[i] < rank[*best])) {
      best = i;
      best_score = s;
    }
  }
  return best;
}

class ArrivalCurve {
 public:
  explicit ArrivalCurve(int64_t gpus) : gpus_(gpus) {}
  // After each arrival: milli-GPUs arrived and allocated so far, the cluster's fragmentation
  // (milli-GPUs) and the failed arrivals so far.
  void Record(int64_t arrived_milli, int64_t allocated_milli, double frag_milli, int64_t failed);
  // One point per integer percent 1..max_percent (unallocated = 100 - allocated); a percent
  // with no arrival near it repeats the previous point.
  std::vector<FillPoint> Points(int max_percent) const;

 private:
  struct Event {
    int arrived_pct;   // rounded half to even
    double allocated;  // % of capacity, rounded to 2 decimals
    double frag;       // % of capacity
    int64_t failed;
  };
  int64_t gpus_;
  std::vector<Event> events_;
};

}  // namespace paceline::sim::paper
