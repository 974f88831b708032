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

// EXPERIMENT
struct ExpChoice {
  double score;
  std::vector<int> devices;
};
ExpChoice ExpEval(const PaperNode& node, double frag, const PaperPod& pod, const TypicalPods& typ) {
  static const double w = getenv("PL_W") ? atof(getenv("PL_W")) : 0.0;
  static const double wc = getenv("PL_WC") ? atof(getenv("PL_WC")) : 0.0;
  static const int mode = getenv("PL_MODE") ? atoi(getenv("PL_MODE")) : 0;
  auto eval = [&](const PaperNode& after) {
    double d = typ.NodeFragmentation(after) - frag;
    double resid = (double(after.gpu_left_total()) / kMaxSpecGpu * 1000);
    double cres = double(after.cpu_left) / std::max<int64_t>(1, after.cpu_capacity) * 1000;
    if (mode == 1)
      resid = double(after.gpu_left_total()) / std::max<size_t>(1, after.gpu_left.size());
    if (mode == 2) {
      double q = std::floor(1.0 / (1.0 + std::exp(d / 1000)) * 100);
      return q * 1e6 - w * resid - wc * cres;
    }
    if (mode == 4) {
      double q = std::floor(1.0 / (1.0 + std::exp(d / 1000)) * 100);
      double sec = 0;
      if (pod.gpus == 0) {
        double g = double(after.gpu_left_total());
        sec = -g / (double(after.cpu_left) + 1000.0) * 1e3;  // GPU milli per core left
      }
      static const int sec_all = getenv("PL_SECALL") ? 1 : 0;
      if (sec_all && pod.gpus > 0) {
        double g = double(after.gpu_left_total());
        sec = -w * g / (double(after.cpu_left) + 1000.0) * 1e3;
      }
      return q * 1e6 + sec;
    }
    if (mode == 3) {  // quantise delta to PL_Q milli
      static const double qq = getenv("PL_Q") ? atof(getenv("PL_Q")) : 40;
      double q = std::floor(-d / qq);
      return q * 1e6 - w * resid - wc * cres;
    }
    return -d - w * resid - wc * cres;
  };
  ExpChoice best{-1e18, {}};
  if (pod.shares_gpu()) {
    for (size_t i = 0; i < node.gpu_left.size(); ++i) {
      if (node.gpu_left[i] < pod.gpu_milli) continue;
      PaperNode after = node;
      after.cpu_left -= pod.cpu_score;
      after.gpu_left[i] -= pod.gpu_milli;
      double s = eval(after);
      if (s > best.score) best = {s, {int(i)}};
    }
    return best;
  }
  PaperNode after = node;
  after.cpu_left -= pod.cpu_score;
  std::vector<int> devs;
  for (size_t i = 0; i < node.gpu_left.size() && int(devs.size()) < pod.gpus; ++i)
    if (node.gpu_left[i] == kMilli) devs.push_back(int(i));
  for (int d : devs) after.gpu_left[d] -= pod.gpu_milli;
  return {eval(after), devs};
}

class ExpPlacer final : public Placer {
 public:
  ExpPlacer(const PaperTrace& t, const std::vector<uint32_t>& rank, const Mirror& m,
            const TypicalPods& typ)
      : t_(t), rank_(rank), m_(m), typ_(typ), cache_(t.types) {}
  std::optional<Placed> Place(size_t i) override {
    const PaperPod& pod = t_.pods[i];
    auto& cache = cache_[t_.type_of[i]];
    if (cache.empty()) cache.resize(m_.size());
    std::optional<size_t> best;
    double bs = 0;
    for (size_t n = 0; n < m_.size(); ++n) {
      auto& c = cache[n];
      if (c.version != m_.version(n)) {
        c.version = m_.version(n);
        c.fits = m_.node(n).Fits(pod);
        if (c.fits) c.choice = ExpEval(m_.node(n), typ_.NodeFragmentation(m_.node(n)), pod, typ_);
      }
      if (!c.fits) continue;
      static const double A = getenv("PL_NOISE") ? atof(getenv("PL_NOISE")) : 0;
      double sc = c.choice.score;
      if (A > 0) {
        uint64_t h = (uint64_t(n) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(i) * 0xC2B2AE3D27D4EB4Full) ^
                     (arrival_ * 0x165667B19E3779F9ull);
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        sc += A * double(h % 1000000) / 1e6;
      }
      if (!best || sc > bs + 1e-9 || (std::abs(sc - bs) <= 1e-9 && rank_[n] < rank_[*best])) {
        best = n;
        bs = sc;
      }
    }
    ++arrival_;
    if (!best) return std::nullopt;
    return Placed{*best, cache[*best].choice.devices};
  }

 private:
  uint64_t arrival_ = 0;
  struct C {
    uint32_t version = ~0u;
    bool fits = false;
    ExpChoice choice;
  };
  const PaperTrace& t_;
  const std::vector<uint32_t>& rank_;
  const Mirror& m_;
  const TypicalPods& typ_;
  std::vector<std::vector<C>> cache_;
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
      : t_(t), node_of_slot_(rank.size()) {
    for (size_t n = 0; n < rank.size(); ++n) node_of_slot_[rank[n]] = n;
    for (uint32_t slot = 0; slot < node_of_slot_.size(); ++slot) {
      const AlibabaNode& src = t.source_nodes[node_of_slot_[slot]];
      placement::HostSpec h;
      h.id = HostId(slot);
      h.name = src.name;
      h.capacity = src.capacity();
      h.gpu_models.assign(static_cast<size_t>(src.gpus), src.model);
      absl::Status s = snap_.AddHost(std::move(h));
      PL_CHECK(s.ok()) << s;
    }
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
  static TypicalPods exp_typ = [&] {
    double pop = getenv("PL_POP") ? atof(getenv("PL_POP")) : 95;
    TypicalPods tp = TypicalPods::From(t.pods, pop);
    double gw = getenv("PL_GW") ? atof(getenv("PL_GW")) : 0;
    double cw = getenv("PL_CW") ? atof(getenv("PL_CW")) : 1;
    double sum = 0;
    for (auto& x : tp.mutable_pods()) {
      if (x.pod.gpus == 0) x.weight *= cw;
      x.weight *= (1 + gw * x.pod.total_gpu() / 1000.0);
      sum += x.weight;
    }
    for (auto& x : tp.mutable_pods()) x.weight /= sum;
    return tp;
  }();
  if (profile == "default" && getenv("PL_MODE")) {
    placer = std::make_unique<ExpPlacer>(t, rank, mirror, exp_typ);
  } else if (absl::StatusOr<Policy> policy = ParsePolicy(profile); policy.ok()) {
    placer = std::make_unique<PaperPlacer>(t, *policy, rank, mirror, random);
  } else {
    placer = std::make_unique<EnginePlacer>(t, profile, seed, rank, max_candidates);
  }
  FillRun run;
  run.profile = profile;
  run.seed = seed;
  ArrivalCurve curve(t.gpus);
  int64_t arrived = 0, allocated = 0;
  std::map<std::string, int64_t> fails;
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
      if (getenv("PL_DIAG") && arrived * 100 <= t.gpus * kMilli * 100)
        fails[pod.affinity()] += pod.total_gpu();
    }
    curve.Record(arrived, allocated, mirror.total_frag(), run.failed);
  }
  if (getenv("PL_DIAG")) {
    // unallocated GPU composition at the end
    std::map<int64_t, double> rem;
    std::map<std::string, double> starved_by;
    double partial = 0, cpu_starved = 0, mem_starved = 0;
    std::map<int, double> idle_by_count;
    for (size_t n = 0; n < mirror.size(); ++n) {
      const PaperNode& nd = mirror.node(n);
      int64_t left = nd.gpu_left_total();
      if (left == 0) continue;
      if (nd.cpu_left < 2000) {
        cpu_starved += left;
        starved_by[std::to_string(nd.cpu_capacity / 1000) + "c" +
                   std::to_string(nd.gpu_left.size()) + "g"] += left;
        continue;
      }
      if (nd.memory_left_mib < 4096) {
        mem_starved += left;
        continue;
      }
      for (int64_t l : nd.gpu_left) {
        if (l < kMilli) {
          partial += l;
          if (l) rem[l / 50 * 50] += l;
        }
      }
      idle_by_count[nd.full_free_gpus()] += nd.full_free_gpus() * 1000.0;
    }
    fprintf(stderr,
            "%s: cpu-starved %.0f mem-starved %.0f partial %.0f idle-by-count:", profile.c_str(),
            cpu_starved / 1000, mem_starved / 1000, partial / 1000);
    for (auto& [k, v] : idle_by_count) fprintf(stderr, " %d:%.0f", k, v / 1000);
    fprintf(stderr, "\n  starved by node kind:");
    for (auto& [k, v] : starved_by) fprintf(stderr, " %s:%.0f", k.c_str(), v / 1000);
    fprintf(stderr, "\n  remnants:");
    for (auto& [k, v] : rem) fprintf(stderr, " %ld:%.0f", (long)k, v / 1000);
    fprintf(stderr, "\n  failed GPU by kind:");
    for (auto& [k, v] : fails) fprintf(stderr, " %s:%.1f", k.c_str(), v / 1000.0);
    fprintf(stderr, "\n");
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.points = curve.Points(static_cast<int>(std::floor(target_percent + 1e-9)));
  run.allocated_pct = 100.0 * static_cast<double>(allocated) / static_cast<double>(t.gpus * kMilli);
  return run;
}

}  // namespace paceline::sim::paper
