// Property test of the placement core: after any random sequence of placements (tasks and
// gangs, regular and revocable, every profile, bounded and unbounded candidate search),
// commits, releases, slack changes, host failures and recoveries:
//   - no host is over-committed in regular work in any dimension, nor in any GPU device
//     (ClusterSnapshot::Validate recomputes every host's usage from the task records);
//   - revocable + regular work never exceeds capacity + slack on any host once the hosts that
//     need it have reclaimed revocable work (modelled here as the scheduler does it: release
//     revocable tasks of the host until it fits), and only hosts where regular work was just
//     placed or whose slack just shrank ever need it — a revocable placement never does;
//   - gangs are never partially placed, in a plan or in the snapshot;
//   - Place() leaves the snapshot unchanged, and ApplyPlan commits every assignment of a plan;
//   - every assignment satisfies the hard constraints, checked by an independent oracle;
//   - a single task is left pending only if the oracle finds no feasible host either.

#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "placement/engine.h"
#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::HostBuilder;
using testing::kMi;
using testing::ShapeBuilder;

const std::vector<std::string> kModels = {"T4", "A100"};
const std::vector<std::string> kZones = {"a", "b", "c"};

// The oracle: an independent, naive restatement of the hard constraints.
// Regular (R) and revocable (V) allocations of a host, summed from its task records.
std::pair<Resources, Resources> Held(const ClusterSnapshot& snap, const HostState& h) {
  Resources regular, revocable;
  for (TaskId t : h.tasks()) {
    const Usage* u = snap.TaskUsage(t);
    (u->revocable ? revocable : regular) += u->resources;
  }
  return {regular, revocable};
}

// What revocable work holds beyond capacity + slack (the slack counting up to R), per dimension.
Resources Excess(const ClusterSnapshot& snap, const HostState& h) {
  auto [regular, revocable] = Held(snap, h);
  Resources excess;
  for (int d = 0; d < kNumDims; ++d) {
    int64_t slack = std::min(h.slack().at(d), regular.at(d));
    excess.at(d) =
        std::max<int64_t>(0, regular.at(d) + revocable.at(d) - h.capacity().at(d) - slack);
  }
  return excess;
}

bool OracleFits(ClusterSnapshot& snap, const TaskShape& s, const HostState& h) {
  if (h.status() != HostStatus::kUp) return false;
  if (h.exclusive() != s.exclusive) return false;
  for (const LabelConstraint& c : s.label_constraints) {
    auto v = h.Label(c.label);
    bool member = v && std::count(c.values.begin(), c.values.end(), std::string(*v)) > 0;
    if (c.op == ConstraintOp::kIn && !member) return false;
    if (c.op == ConstraintOp::kNotIn && member) return false;
  }
  // Regular work: capacity − regular allocations (GPUs: − everything). Revocable work:
  // capacity − all allocations + slack (up to the regular allocations; none in GPUs).
  auto [regular, revocable] = Held(snap, h);
  for (int d = 0; d < kNumDims; ++d) {
    const bool gpu = d == static_cast<int>(Dim::kGpu);
    int64_t free = h.capacity().at(d) - regular.at(d);
    if (s.revocable || gpu) free -= revocable.at(d);
    if (s.revocable && !gpu) free += std::min(h.slack().at(d), regular.at(d));
    if (s.resources.at(d) > free) return false;
  }
  auto allowed = [&](const GpuDevice& d) {
    return s.gpu_models.empty() ||
           std::count(s.gpu_models.begin(), s.gpu_models.end(), d.model) > 0;
  };
  int64_t g = s.gpu_milli();
  if (g >= 1000) {
    int64_t idle = 0;
    for (const GpuDevice& d : h.gpus()) idle += allowed(d) && d.milli_allocated == 0;
    if (idle < g / 1000) return false;
  } else if (g > 0) {
    bool any = false;
    for (const GpuDevice& d : h.gpus()) any |= allowed(d) && 1000 - d.milli_allocated >= g;
    if (!any) return false;
  }
  if (h.free_ports() < s.port_names.size()) return false;
  for (const MaxPerHostConstraint& m : s.max_per_host) {
    uint32_t n = 0;
    if (m.task_label.empty()) {
      n = h.JobCount(s.job);
    } else {
      for (const auto& [k, v] : s.job_labels) {
        if (k == m.task_label) n = h.LabelPairCount(snap.InternLabelPair(k, v));
      }
    }
    if (n >= m.max_per_host) return false;
  }
  return true;
}

std::vector<std::shared_ptr<const TaskShape>> RandomShapes(std::mt19937_64& rng) {
  std::vector<std::shared_ptr<const TaskShape>> shapes;
  for (uint64_t j = 1; j <= 14; ++j) {
    ShapeBuilder b(j);
    b.Cpu(100 * static_cast<int64_t>(1 + rng() % 40));
    b.MemBytes(static_cast<int64_t>(256 + rng() % 4096) * kMi);
    int r = static_cast<int>(rng() % 6);
    if (r == 1) b.Gpu(100 * static_cast<int64_t>(1 + rng() % 9));
    if (r == 2) b.Gpu(1000 * static_cast<int64_t>(1 + rng() % 2));
    if (r >= 1 && r <= 2 && rng() % 3 == 0) b.Models({kModels[rng() % 2]});
    if (rng() % 3 == 0) b.Ports(static_cast<int>(1 + rng() % 2));
    if (rng() % 3 == 0) b.Constraint("zone", ConstraintOp::kIn, {kZones[rng() % 3], "c"});
    if (rng() % 5 == 0) b.Constraint("zone", ConstraintOp::kNotIn, {kZones[rng() % 3]});
    if (rng() % 4 == 0) b.MaxPerHost(static_cast<uint32_t>(1 + rng() % 2));
    // Every app=x task is limited to 2 per host (checked as an invariant below).
    bool app_x = rng() % 4 == 0;
    b.JobLabel("app", app_x ? "x" : "y");
    if (app_x) b.MaxPerHost(2, "app");
    if (rng() % 10 == 0) b.Exclusive("ml");
    if (j % 3 == 0) b.Revocable();
    shapes.push_back(b.Build());
  }
  return shapes;
}

void AddRandomHosts(std::mt19937_64& rng, ClusterSnapshot& snap, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    HostBuilder b(i);
    b.Cpu(1000 * static_cast<int64_t>(2 + rng() % 15));
    b.MemGi(static_cast<int64_t>(2 + rng() % 30));
    int gpus = static_cast<int>(rng() % 5);
    if (gpus > 0) b.Gpus(gpus, kModels[rng() % 2]);
    b.Label("zone", kZones[rng() % 3]);
    if (rng() % 10 == 0) b.Label("paceline.exclusive", "ml");
    uint32_t first = 31000 + 10 * i;
    b.Ports(first, first + static_cast<uint32_t>(rng() % 4));
    ASSERT_TRUE(snap.AddHost(b.Build()).ok());
  }
}

struct Fingerprint {
  std::vector<Resources> allocated;
  std::vector<std::vector<int64_t>> gpus;
  size_t tasks;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

Fingerprint Take(const ClusterSnapshot& snap) {
  Fingerprint f;
  f.tasks = snap.num_tasks();
  for (uint32_t s = 0; s < snap.slots(); ++s) {
    if (!snap.present(s)) continue;
    f.allocated.push_back(snap.host_at(s).allocated());
    std::vector<int64_t> g;
    for (const GpuDevice& d : snap.host_at(s).gpus()) g.push_back(d.milli_allocated);
    f.gpus.push_back(g);
  }
  return f;
}

void RunScenario(uint64_t seed, int steps) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  ClusterSnapshot snap;
  AddRandomHosts(rng, snap, 24);
  auto shapes = RandomShapes(rng);
  std::vector<std::string> profiles = ProfileNames();
  std::vector<std::unique_ptr<PlacementEngine>> engines;
  for (const std::string& p : profiles) {
    for (uint32_t k : {0u, 1u, 4u, 16u}) {
      EngineConfig c;
      c.profile = p;
      c.max_candidates = k;
      c.seed = seed;
      engines.push_back(std::move(*PlacementEngine::Create(c)));
    }
  }
  // Gang membership of committed tasks: every member of a committed gang stays committed
  // until released; releases and failures take out single tasks (the job manager's business).
  std::vector<TaskId> live;
  uint32_t next_instance = 0;
  int pending_checked = 0;
  int gangs_placed = 0;
  int gangs_pending = 0;
  int assignments = 0;
  int revocable_assignments = 0;
  int reclaimed = 0;

  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    std::set<uint32_t> may_exceed;  // hosts that got regular work or lost slack in this step
    int op = static_cast<int>(rng() % 12);
    if (op < 5) {
      // Place a batch of tasks and gangs, then commit it.
      std::vector<PlacementRequest> rs;
      int n = static_cast<int>(1 + rng() % 6);
      for (int i = 0; i < n; ++i) {
        auto shape = shapes[rng() % shapes.size()];
        uint32_t size = rng() % 4 == 0 ? static_cast<uint32_t>(2 + rng() % 6) : 1;
        rs.push_back(PlacementRequest::Gang(shape->job, next_instance, size, shape));
        next_instance += size;
      }
      PlacementEngine& engine = *engines[rng() % engines.size()];
      SCOPED_TRACE(::testing::Message() << "profile " << engine.profile().spec().name
                                        << " candidates " << engine.max_candidates());
      Fingerprint before = Take(snap);
      Plan plan = engine.Place(rs, snap);
      ASSERT_TRUE(Take(snap) == before) << "Place() changed the snapshot";

      // Gangs: all members assigned, or the request pending with all members; never both.
      absl::flat_hash_map<uint32_t, size_t> assigned;
      std::set<TaskId> seen;
      for (const Assignment& a : plan.assignments) {
        ++assigned[a.request_index];
        ASSERT_TRUE(seen.insert(a.task).second) << "task assigned twice";
      }
      std::set<uint32_t> pending;
      for (const PendingRequest& p : plan.pending) {
        pending.insert(p.request_index);
        ASSERT_EQ(p.tasks.size(), rs[p.request_index].tasks.size());
        ASSERT_FALSE(p.explanation.OneLine().empty());
        ASSERT_EQ(p.explanation.hosts_feasible, 0) << p.explanation.OneLine();
      }
      for (uint32_t i = 0; i < rs.size(); ++i) {
        bool is_pending = pending.contains(i);
        size_t got = assigned.contains(i) ? assigned[i] : 0;
        ASSERT_TRUE(is_pending ? got == 0 : got == rs[i].tasks.size())
            << "request " << i << " of " << rs[i].tasks.size() << " tasks: " << got
            << " assigned, pending " << is_pending;
        if (rs[i].tasks.size() > 1) ++(is_pending ? gangs_pending : gangs_placed);
      }
      // Replay the plan request by request: each assignment must satisfy the oracle just
      // before it lands, and a single task left pending must fit no host in the state its
      // turn saw (the plan's earlier assignments committed, rolled-back gangs not).
      size_t next = 0;
      for (uint32_t i = 0; i < rs.size(); ++i) {
        for (; next < plan.assignments.size() && plan.assignments[next].request_index == i;
             ++next) {
          const Assignment& a = plan.assignments[next];
          ASSERT_TRUE(OracleFits(snap, *a.shape, *snap.host(a.host)))
              << "assignment of " << a.task.ToString() << " to " << a.host.value();
          ASSERT_TRUE(snap.Commit(a).ok());
          live.push_back(a.task);
          ++assignments;
          if (a.shape->revocable) {
            ++revocable_assignments;
          } else {
            may_exceed.insert(a.host.value());
          }
        }
        if (pending.contains(i) && rs[i].tasks.size() == 1) {
          for (uint32_t s = 0; s < snap.slots(); ++s) {
            ASSERT_FALSE(OracleFits(snap, *rs[i].tasks[0].shape, snap.host_at(s)))
                << "pending, but host " << s << " fits";
          }
          ++pending_checked;
        }
      }
      ASSERT_EQ(next, plan.assignments.size()) << "assignments out of request order";
    } else if (op < 8 && !live.empty()) {
      // Release a few tasks.
      for (int i = 0; i < 6 && !live.empty(); ++i) {
        size_t k = rng() % live.size();
        ASSERT_TRUE(snap.Release(live[k]).ok());
        live[k] = live.back();
        live.pop_back();
      }
    } else if (op == 8) {
      // A host fails; its tasks are released.
      HostId h(static_cast<uint32_t>(rng() % snap.slots()));
      auto released = snap.FailHost(h, rng() % 2 ? HostStatus::kLost : HostStatus::kDown);
      ASSERT_TRUE(released.ok());
      std::set<TaskId> gone(released->begin(), released->end());
      live.erase(std::remove_if(live.begin(), live.end(),
                                [&](const TaskId& t) { return gone.contains(t); }),
                 live.end());
      for (TaskId t : gone) ASSERT_FALSE(snap.TaskHost(t).has_value());
    } else if (op == 9) {
      // A failed or drained host comes back, or one starts draining.
      HostId h(static_cast<uint32_t>(rng() % snap.slots()));
      HostStatus s = rng() % 3 == 0 ? HostStatus::kDraining : HostStatus::kUp;
      ASSERT_TRUE(snap.SetHostStatus(h, s).ok());
    } else {
      // A usage report: some of what a host's regular work holds is idle (or none is).
      for (int i = 0; i < 4; ++i) {
        uint32_t slot = static_cast<uint32_t>(rng() % snap.slots());
        const HostState& h = snap.host_at(slot);
        Resources regular = Held(snap, h).first;
        Resources slack =
            Resources::Of(regular.cpu_milli() * static_cast<int64_t>(rng() % 5) / 4,
                          regular.memory_bytes() * static_cast<int64_t>(rng() % 5) / 4);
        if (rng() % 8 == 0) slack = Resources::Of(1'000'000, int64_t{1} << 40);  // clamped to R
        // Shrinking in any dimension may leave revocable work beyond capacity + slack.
        if (!h.effective_slack().FitsIn(Min(slack, regular))) may_exceed.insert(slot);
        ASSERT_TRUE(snap.SetHostSlack(HostId(slot), slack).ok());
      }
    }
    // Reclaim, as the scheduler does: revocable tasks leave hosts where they exceed capacity +
    // slack until they fit. Only hosts that got regular work or lost slack ever need it.
    for (uint32_t s = 0; s < snap.slots(); ++s) {
      const HostState& h = snap.host_at(s);
      ASSERT_EQ(Excess(snap, h), h.RevocableExcess()) << h.name();
      if (h.RevocableExcess().IsZero()) continue;
      ASSERT_TRUE(may_exceed.contains(s))
          << h.name() << " exceeds capacity + slack by " << h.RevocableExcess().ToString();
      const std::vector<TaskId> tasks = h.tasks();
      for (TaskId t : tasks) {
        if (h.RevocableExcess().IsZero()) break;
        if (!snap.TaskUsage(t)->revocable) continue;
        ASSERT_TRUE(snap.Release(t).ok());
        live.erase(std::find(live.begin(), live.end(), t));
        ++reclaimed;
      }
      ASSERT_TRUE(h.RevocableExcess().IsZero()) << h.name();
    }
    absl::Status valid = snap.Validate();
    ASSERT_TRUE(valid.ok()) << valid;
    ASSERT_EQ(snap.num_tasks(), live.size());
    for (uint32_t s = 0; s < snap.slots(); ++s) {
      const HostState& h = snap.host_at(s);
      auto [regular, revocable] = Held(snap, h);
      ASSERT_TRUE(regular.FitsIn(h.capacity())) << h.name() << ": regular over-committed";
      ASSERT_TRUE((regular + revocable).FitsIn(h.capacity() + h.effective_slack()))
          << h.name() << ": revocable + regular above capacity + slack";
    }
    // Anti-affinity invariants that hold whatever the order: per-job limits, and app=x <= 2.
    for (uint32_t s = 0; s < snap.slots(); ++s) {
      const HostState& h = snap.host_at(s);
      ASSERT_LE(h.LabelPairCount(snap.InternLabelPair("app", "x")), 2u) << h.name();
      for (const auto& shape : shapes) {
        for (const MaxPerHostConstraint& m : shape->max_per_host) {
          if (m.task_label.empty()) {
            ASSERT_LE(h.JobCount(shape->job), m.max_per_host);
          }
        }
      }
    }
  }
  // The history exercised what it claims to.
  EXPECT_GT(assignments, 200);
  EXPECT_GT(gangs_placed, 5);
  EXPECT_GT(gangs_pending, 5);
  EXPECT_GT(pending_checked, 5);
  EXPECT_GT(revocable_assignments, 20);
  EXPECT_GT(reclaimed, 5);
  std::cout << "seed " << seed << ": " << assignments << " assignments (" << revocable_assignments
            << " revocable, " << reclaimed << " reclaimed), " << gangs_placed << " gangs placed, "
            << gangs_pending << " gangs pending, " << pending_checked
            << " lone pending tasks checked by the oracle\n";
}

TEST(PlacementProperty, NoOvercommitNoPartialGangsAcrossRandomHistories) {
  for (uint64_t seed : {1ull, 2ull, 3ull, 20240601ull, 987654321ull}) {
    RunScenario(seed, 400);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace paceline::placement
