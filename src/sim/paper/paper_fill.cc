#include "sim/paper/paper_fill.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/str_join.h"
#include "common/check.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "placement/plan.h"
#include "sim/paper/paper_policies.h"
#include "sim/paper/paper_protocol.h"
#include "sim/paper/seeded_random.h"

namespace paceline::sim::paper {
namespace {

// The cluster as the measure sees it: every node's state, its fragmentation, and a version
// that grows whenever the node changes.
class Mirror {
 public:
  explicit Mirror(const PaperTrace& t) : typical_(t.typical), nodes_(t.nodes) {
    frag_.reserve(nodes_.size());
    for (const PaperNode& n : nodes_) {
      frag_.push_back(typical_.NodeFragmentation(n));
      total_frag_ += frag_.back();
    }
    version_.assign(nodes_.size(), 0);
  }
  const PaperNode& node(size_t i) const { return nodes_[i]; }
  double frag(size_t i) const { return frag_[i]; }
  uint32_t version(size_t i) const { return version_[i]; }
  size_t size() const { return nodes_.size(); }
  double total_frag() const { return total_frag_; }

  void Bind(size_t i, const PaperPod& pod, const std::vector<int>& devices) {
    nodes_[i].Bind(pod, devices);
    double f = typical_.NodeFragmentation(nodes_[i]);
    total_frag_ += f - frag_[i];
    frag_[i] = f;
    ++version_[i];
  }

 private:
  const TypicalPods& typical_;
  std::vector<PaperNode> nodes_;
  std::vector<double> frag_;
  std::vector<uint32_t> version_;
  double total_frag_ = 0;
};

struct Placed {
  size_t node = 0;
  std::vector<int> devices;
};

class Placer {
 public:
  virtual ~Placer() = default;
  // Where the pod (index into PaperTrace::pods) goes; nullopt when it fits nowhere.
  virtual std::optional<Placed> Place(size_t pod) = 0;
};

// One of the paper's policies. Scores depend only on the node's state and the pod's type, so
// they are kept per (type, node) until the node changes.
class PaperPlacer final : public Placer {
 public:
  PaperPlacer(const PaperTrace& t, Policy policy, const std::vector<uint32_t>& rank,
              const Mirror& mirror, SeededRandom& random)
      : t_(t), policy_(policy), rank_(rank), mirror_(mirror), random_(random), cache_(t.types) {}

  std::optional<Placed> Place(size_t i) override {
    const PaperPod& pod = t_.pods[i];
    std::optional<size_t> best =
        policy_ == Policy::kRandom ? DrawFeasible(pod) : BestScored(pod, t_.type_of[i]);
    if (!best) return std::nullopt;
    const PaperNode& node = mirror_.node(*best);
    return Placed{*best,
                  ChooseDevices(policy_, node, mirror_.frag(*best), pod, t_.typical, random_)};
  }

 private:
  struct Cached {
    uint32_t version = std::numeric_limits<uint32_t>::max();
    int64_t score = -1;  // -1: the pod does not fit
  };

  std::optional<size_t> DrawFeasible(const PaperPod& pod) {
    std::vector<size_t> feasible;
    for (size_t n = 0; n < mirror_.size(); ++n) {
      if (mirror_.node(n).Fits(pod)) feasible.push_back(n);
    }
    if (feasible.empty()) return std::nullopt;
    return feasible[random_.Below(feasible.size())];
  }

  std::optional<size_t> BestScored(const PaperPod& pod, uint32_t type) {
    std::vector<Cached>& cache = cache_[type];
    if (cache.empty()) cache.resize(mirror_.size());
    return BestNode(rank_, [&](size_t n) {
      Cached& c = cache[n];
      if (c.version != mirror_.version(n)) {
        const PaperNode& node = mirror_.node(n);
        c.score = node.Fits(pod) ? Score(policy_, node, mirror_.frag(n), pod, t_.typical) : -1;
        c.version = mirror_.version(n);
      }
      return c.score;
    });
  }

  const PaperTrace& t_;
  Policy policy_;
  const std::vector<uint32_t>& rank_;
  const Mirror& mirror_;
  SeededRandom& random_;
  std::vector<std::vector<Cached>> cache_;  // per type, per node
};

// One of Paceline's profiles through the real engine, every feasible host scored.
class EnginePlacer final : public Placer {
 public:
  EnginePlacer(const PaperTrace& t, const std::string& profile, uint64_t seed,
               const std::vector<uint32_t>& rank, std::optional<uint32_t> max_candidates)
      : t_(t), node_of_slot_(NodeOfSlot(rank)), snap_(FillCluster(t.source_nodes, node_of_slot_)) {
    absl::StatusOr<placement::EngineConfig> c =
        FillEngineConfig(profile, seed, t.workload.distribution, max_candidates);
    PL_CHECK(c.ok()) << c.status();
    auto engine = placement::PlacementEngine::Create(*c);
    PL_CHECK(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::optional<Placed> Place(size_t i) override {
    const auto& shape = t_.workload.tasks[i];
    one_[0] = placement::PlacementRequest::Single({TaskId{shape->job, instance_++}, shape, {}, {}});
    placement::Plan plan = engine_->Place(one_, snap_);
    if (plan.assignments.empty()) return std::nullopt;
    const placement::Assignment& a = plan.assignments[0];
    Placed out{node_of_slot_[a.host.value()], {}};
    for (const placement::GpuShare& g : a.gpus) out.devices.push_back(g.device);
    placement::ApplyResult r = placement::ApplyPlan(plan, snap_);
    PL_CHECK(r.committed == 1);
    return out;
  }

 private:
  // Hosts enter the snapshot in the run's node order: slot r holds the node of rank r.
  static std::vector<size_t> NodeOfSlot(const std::vector<uint32_t>& rank) {
    std::vector<size_t> out(rank.size());
    for (size_t n = 0; n < rank.size(); ++n) out[rank[n]] = n;
    return out;
  }

  const PaperTrace& t_;
  std::vector<size_t> node_of_slot_;
  placement::ClusterSnapshot snap_;
  std::unique_ptr<placement::PlacementEngine> engine_;
  std::vector<placement::PlacementRequest> one_{1};
  uint32_t instance_ = 0;
};

}  // namespace

absl::StatusOr<PaperTrace> PaperTrace::Build(std::vector<AlibabaNode> nodes,
                                             std::vector<AlibabaTask> tasks) {
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::stable_sort(nodes.begin(), nodes.end(), by_name);
  std::stable_sort(tasks.begin(), tasks.end(), by_name);
  PaperTrace t;
  for (const AlibabaNode& n : nodes) {
    t.nodes.push_back(PaperNode::From(n));
    t.gpus += n.gpus;
  }
  if (t.gpus == 0)
    return absl::InvalidArgumentError("fill mode needs GPUs, and the cluster has none");
  absl::StatusOr<FillWorkload> workload = FillWorkload::Build(tasks);
  if (!workload.ok()) return workload.status();
  t.workload = std::move(*workload);
  std::map<std::tuple<int64_t, int64_t, int64_t, int, std::string>, uint32_t> types;
  for (const AlibabaTask& task : tasks) {
    PaperPod p = PaperPod::From(task);
    auto key = std::tuple(p.cpu, p.memory_mib, p.gpu_milli, p.gpus, absl::StrJoin(p.models, "|"));
    auto [it, added] = types.try_emplace(key, static_cast<uint32_t>(types.size()));
    t.type_of.push_back(it->second);
    t.pods.push_back(std::move(p));
  }
  t.types = static_cast<uint32_t>(types.size());
  t.typical = TypicalPods::From(t.pods);
  t.source_nodes = std::move(nodes);
  return t;
}

std::vector<std::string> ProtocolProfiles() {
  std::vector<std::string> out = PolicyNames();
  out.push_back("default");
  return out;
}

FillRun RunProtocolOnce(const PaperTrace& t, const std::string& profile, uint64_t seed,
                        double target_percent, std::optional<uint32_t> max_candidates) {
  SeededRandom random(seed);
  Arrivals arrivals = BuildArrivals(t.pods, t.gpus * kMilli, target_percent / 100, random);
  std::vector<uint32_t> rank = NodeRanks(t.nodes.size(), random);
  Mirror mirror(t);
  std::unique_ptr<Placer> placer;
  if (absl::StatusOr<Policy> policy = ParsePolicy(profile); policy.ok()) {
    placer = std::make_unique<PaperPlacer>(t, *policy, rank, mirror, random);
  } else {
    placer = std::make_unique<EnginePlacer>(t, profile, seed, rank, max_candidates);
  }
  FillRun run;
  run.profile = profile;
  run.seed = seed;
  ArrivalCurve curve(t.gpus);
  int64_t arrived = 0, allocated = 0;
  auto start = std::chrono::steady_clock::now();
  for (size_t i : arrivals.order) {
    const PaperPod& pod = t.pods[i];
    arrived += pod.total_gpu();
    ++run.arrived;
    std::optional<Placed> placed = placer->Place(i);
    if (placed) {
      mirror.Bind(placed->node, pod, placed->devices);
      allocated += pod.total_gpu();
    } else {
      ++run.failed;
      run.failed_gpu_tasks += pod.gpus > 0;
    }
    curve.Record(arrived, allocated, mirror.total_frag(), run.failed);
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.points = curve.Points(static_cast<int>(std::floor(target_percent + 1e-9)));
  run.allocated_pct = 100.0 * static_cast<double>(allocated) / static_cast<double>(t.gpus * kMilli);
  return run;
}

}  // namespace paceline::sim::paper
