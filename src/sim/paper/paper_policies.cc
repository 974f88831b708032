#include "sim/paper/paper_policies.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"

namespace paceline::sim::paper {
namespace {

struct Entry {
  Policy policy;
  absl::string_view name;
  absl::string_view artifact;
};
constexpr Entry kPolicies[] = {
    {Policy::kRandom, "paper-random", "RandomScore"},
    {Policy::kDotProduct, "paper-dot-product", "DotProductScore"},
    {Policy::kClustering, "paper-clustering", "GpuClusteringScore"},
    {Policy::kPacking, "paper-packing", "GpuPackingScore"},
    {Policy::kBestFit, "paper-best-fit", "BestFitScore"},
    {Policy::kFgd, "paper-fgd", "FGDScore"},
};

const Entry& EntryOf(Policy p) {
  for (const Entry& e : kPolicies) {
    if (e.policy == p) return e;
  }
  PL_CHECK(false) << "unknown policy";
  return kPolicies[0];
}

// Go's int64(x) of a non-negative float64.
int64_t Truncate(double x) { return static_cast<int64_t>(x); }

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The lowest-numbered idle devices, `pod.gpus` of them (AllocateExclusiveGpuId).
std::vector<int> LowestIdle(const PaperNode& node, const PaperPod& pod) {
  std::vector<int> out;
  for (size_t i = 0; i < node.gpu_left.size() && static_cast<int>(out.size()) < pod.gpus; ++i) {
    if (node.gpu_left[i] == kMilli) out.push_back(static_cast<int>(i));
  }
  PL_CHECK(static_cast<int>(out.size()) == pod.gpus) << node.name << " lacks idle devices";
  return out;
}

// Device indices by free milli-GPUs, least first, device order on ties
// (SortedMilliGpuLeftIndexList(true)).
std::vector<int> LeastFreeFirst(const PaperNode& node) {
  std::vector<int> idx(node.gpu_left.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int a, int b) { return node.gpu_left[a] < node.gpu_left[b]; });
  return idx;
}

// The devices the pod's asks take, each the least free device that fits (the artifact's
// NodeResource.Sub and its packing policy); fewer than pod.gpus when the node lacks room.
std::vector<int> LeastFreeFitting(const PaperNode& node, const PaperPod& pod) {
  std::vector<int> out;
  for (int i : LeastFreeFirst(node)) {
    if (static_cast<int>(out.size()) == pod.gpus) break;
    if (node.gpu_left[i] >= pod.gpu_milli) out.push_back(i);
  }
  return out;
}

// The node after the pod as FGD imagines it (NodeResource.Sub): cpu_score off the cpu, and
// each device asked off the least free devices that fit.
PaperNode FgdAfter(const PaperNode& node, const PaperPod& pod) {
  PaperNode after = node;
  after.cpu_left -= pod.cpu_score;
  for (int i : LeastFreeFitting(node, pod)) after.gpu_left[i] -= pod.gpu_milli;
  return after;
}

int64_t FgdScore(double before, const PaperNode& after, const TypicalPods& typical) {
  double delta = before - typical.NodeFragmentation(after);
  return Truncate(Sigmoid(delta / kMilli) * kMaxNodeScore);
}

struct FgdShareChoice {
  int64_t score = 0;
  int device = -1;
};

// A fraction: every device with room, the best score (the first device on ties).
FgdShareChoice FgdShare(const PaperNode& node, double frag, const PaperPod& pod,
                        const TypicalPods& typical) {
  FgdShareChoice best;
  for (size_t i = 0; i < node.gpu_left.size(); ++i) {
    if (node.gpu_left[i] < pod.gpu_milli) continue;
    PaperNode after = node;
    after.cpu_left -= pod.cpu_score;
    after.gpu_left[i] -= pod.gpu_milli;
    int64_t s = FgdScore(frag, after, typical);
    if (best.device < 0 || s > best.score) best = {s, static_cast<int>(i)};
  }
  return best;
}

int64_t PackingScore(const PaperNode& node, const PaperPod& pod) {
  const int full_free = node.full_free_gpus();
  if (full_free == static_cast<int>(node.gpu_left.size())) {
    return std::max<int64_t>(kMaxNodeScore / 3 - full_free, full_free);
  }
  const std::vector<int> used = LeastFreeFitting(node, pod);
  PL_CHECK(static_cast<int>(used.size()) == pod.gpus) << node.name << " cannot take the pod";
  int full_free_used = 0;
  for (int i : used) full_free_used += node.gpu_left[i] == kMilli;
  if (full_free_used > 0) {
    return std::max<int64_t>(kMaxNodeScore / 2 - full_free_used, kMaxNodeScore / 3);
  }
  int64_t free_ratio = 0;
  for (int i : used) free_ratio += node.gpu_left[i] * 100 / kMilli;
  return std::max<int64_t>(kMaxNodeScore - free_ratio / 10, kMaxNodeScore / 2);
}

int64_t ClusteringScore(const PaperNode& node, const PaperPod& pod) {
  if (pod.gpus == 0) return 0;
  const int64_t used = kMaxNodeScore / 4 * (kMaxSpecGpu - node.gpu_left_total()) / kMaxSpecGpu;
  const bool holds_kind = node.affinity.contains(pod.affinity());
  const size_t kinds = node.affinity.size();
  if (holds_kind) return used + (kinds == 1 ? kMaxNodeScore * 3 / 4 : kMaxNodeScore * 2 / 4);
  return used + (kinds == 0 ? kMaxNodeScore / 4 : 0);
}

int64_t BestFitScore(const PaperNode& node, const PaperPod& pod) {
  double score = static_cast<double>(node.cpu_left - pod.cpu_score) / kMaxSpecCpu * 0.5 +
                 static_cast<double>(node.gpu_left_total() - pod.total_gpu()) / kMaxSpecGpu * 0.5;
  return Truncate((1.0 - score) * kMaxNodeScore);
}

int64_t DotProductScore(const PaperNode& node, const PaperPod& pod) {
  if (node.cpu_left < pod.cpu_score) return 0;
  double dot =
      static_cast<double>(node.cpu_left) / kMaxSpecCpu * pod.cpu_score / kMaxSpecCpu +
      static_cast<double>(node.gpu_left_total()) / kMaxSpecGpu * pod.total_gpu() / kMaxSpecGpu;
  return Truncate(kMaxNodeScore * (1 - dot / 2));
}

}  // namespace

std::vector<std::string> PolicyNames() {
  std::vector<std::string> out;
  for (const Entry& e : kPolicies) out.emplace_back(e.name);
  return out;
}

absl::string_view PolicyName(Policy p) { return EntryOf(p).name; }
absl::string_view ArtifactName(Policy p) { return EntryOf(p).artifact; }

absl::StatusOr<Policy> ParsePolicy(absl::string_view name) {
  for (const Entry& e : kPolicies) {
    if (e.name == name) return e.policy;
  }
  return absl::NotFoundError(absl::StrCat("unknown paper policy '", name,
                                          "'; known: ", absl::StrJoin(PolicyNames(), ", ")));
}

int64_t Score(Policy policy, const PaperNode& node, double frag, const PaperPod& pod,
              const TypicalPods& typical) {
  switch (policy) {
    case Policy::kRandom:
      return 0;
    case Policy::kDotProduct:
      return DotProductScore(node, pod);
    case Policy::kClustering:
      return ClusteringScore(node, pod);
    case Policy::kPacking:
      return pod.gpu_milli > 0 ? PackingScore(node, pod) : 0;
    case Policy::kBestFit:
      return BestFitScore(node, pod);
    case Policy::kFgd:
      if (pod.shares_gpu()) return FgdShare(node, frag, pod, typical).score;
      return FgdScore(frag, FgdAfter(node, pod), typical);
  }
  return 0;
}

std::vector<int> ChooseDevices(Policy policy, const PaperNode& node, double frag,
                               const PaperPod& pod, const TypicalPods& typical,
                               SeededRandom& random) {
  if (pod.gpus == 0) return {};
  if (!pod.shares_gpu()) return LowestIdle(node, pod);
  int chosen = -1;
  if (policy == Policy::kFgd) {
    chosen = FgdShare(node, frag, pod, typical).device;
  } else if (policy == Policy::kRandom) {
    uint64_t fitting = 0;
    for (size_t i = 0; i < node.gpu_left.size(); ++i) {
      if (node.gpu_left[i] >= pod.gpu_milli && random.Below(++fitting) == 0) {
        chosen = static_cast<int>(i);
      }
    }
  } else {
    for (size_t i = 0; i < node.gpu_left.size(); ++i) {
      if (node.gpu_left[i] >= pod.gpu_milli &&
          (chosen < 0 || node.gpu_left[i] < node.gpu_left[chosen])) {
        chosen = static_cast<int>(i);
      }
    }
  }
  PL_CHECK(chosen >= 0) << node.name << " has no device with room";
  return {chosen};
}

}  // namespace paceline::sim::paper
