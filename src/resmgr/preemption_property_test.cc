// Preemption properties over random pool trees and random sequences of demand changes (new
// gangs, cancellations, finished work), with a fixed, printed seed. After every change the
// test drives the resource manager like the master does (admitted tasks start; preempted tasks
// are released and their gang requeued in the same turn) and checks that:
//   - the system reaches allocation <= entitlement (and revocable <= slack entitlement) in every
//     pool within a bounded number of cycles, and then stays quiet (no further preemption);
//   - no task is preempted twice for the same demand change;
//   - non-preemptible work is never preempted;
//   - one cycle never preempts more than the per-cycle cap (beyond its first victim).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "resmgr/resource_manager.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using testing::kGi;

constexpr uint64_t kSeed = 0x5eed'0002;
constexpr int kScenarios = 400;
constexpr int kChanges = 8;

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

class Scenario {
 public:
  explicit Scenario(std::mt19937_64& rng) : rng_(rng), rm_(RandomConfig()) {
    capacity_ = Resources::Of(Cores(100), 100 * kGi);
    BuildTree();
  }

  void Run() {
    for (int change = 0; change < kChanges; ++change) {
      SCOPED_TRACE(::testing::Message() << "change " << change);
      ChangeDemand();
      ASSERT_NO_FATAL_FAILURE(Settle());
    }
  }
  int max_cycles_to_settle() const { return max_settle_; }
  const std::array<int, 3>& preemptions_by_cause() const { return by_cause_; }

 private:
  ResourceManagerConfig RandomConfig() {
    ResourceManagerConfig c;
    c.preemption.hysteresis_cycles = static_cast<int>(Uniform(rng_, 1, 3));
    if (rng_() % 2) {
      c.preemption.max_per_cycle = Resources::Of(Cores(static_cast<double>(Uniform(rng_, 10, 40))),
                                                 kUnlimited, kUnlimited, kUnlimited);
    }
    config_ = c;
    return c;
  }

  // Root children get disjoint parts of the capacity as reservations; grandchildren parts of
  // their parent's. Limits are at least the reservation and at most the parent's limit.
  void BuildTree() {
    const int top = static_cast<int>(Uniform(rng_, 1, 4));
    Resources left = capacity_;
    for (int i = 0; i < top; ++i) {
      PoolSpec spec = RandomSpec(left, Resources::Filled(kUnlimited));
      left -= spec.Reservation();
      const std::string path = absl::StrCat("/p", i);
      absl::StatusOr<PoolId> id = rm_.CreatePool(path, spec);
      ASSERT_TRUE(id.ok()) << id.status();
      const int kids = rng_() % 2 ? 0 : static_cast<int>(Uniform(rng_, 1, 3));
      if (kids == 0) {
        leaves_.push_back(*id);
        continue;
      }
      Resources inner = spec.Reservation();
      for (int k = 0; k < kids; ++k) {
        PoolSpec child = RandomSpec(inner, spec.Limit());
        inner -= child.Reservation();
        absl::StatusOr<PoolId> cid = rm_.CreatePool(absl::StrCat(path, "/c", k), child);
        ASSERT_TRUE(cid.ok()) << cid.status();
        leaves_.push_back(*cid);
      }
    }
  }

  PoolSpec RandomSpec(const Resources& budget, const Resources& parent_limit) {
    PoolSpec spec;
    for (Dim d : {Dim::kCpu, Dim::kMemory}) {
      const int64_t res = budget[d] > 0 ? Uniform(rng_, 0, budget[d] / 2) : 0;
      int64_t limit = parent_limit[d];
      if (rng_() % 3 == 0) {
        const int64_t hi = std::min(parent_limit[d], capacity_[d]);
        limit = Uniform(rng_, std::min(res + capacity_[d] / 10, hi), hi);
        limit = std::max(limit, res);
      }
      spec.dim(d) = DimSpec{res, limit, static_cast<double>(Uniform(rng_, 1, 3))};
    }
    return spec;
  }

  GangRequest RandomGang(PoolId pool) {
    GangRequest g;
    g.id = GangId(next_gang_++);
    g.job = JobId(next_job_++);
    g.pool = pool;
    g.priority = static_cast<int32_t>(Uniform(rng_, -2, 2));
    const int kind = static_cast<int>(rng_() % 10);
    g.sla = kind < 2 ? SlaClass::kNonPreemptible
                     : (kind < 8 ? SlaClass::kPreemptible : SlaClass::kRevocable);
    g.controller = rng_() % 10 == 0;
    const int n = static_cast<int>(Uniform(rng_, 1, 3));
    for (int i = 0; i < n; ++i) {
      g.tasks.push_back(TaskRequest{TaskId{g.job, static_cast<uint32_t>(i)},
                                    Resources::Of(Cores(static_cast<double>(Uniform(rng_, 1, 15))),
                                                  Uniform(rng_, 0, 8) * kGi)});
    }
    return g;
  }

  void Enqueue(const GangRequest& g) {
    if (rm_.Enqueue(g, clock_.Now()).ok()) requests_[g.id] = g;  // refusals are fine
  }

  void ChangeDemand() {
    ++epoch_;
    preempted_this_change_.clear();
    const int adds = static_cast<int>(Uniform(rng_, 1, 6));
    for (int i = 0; i < adds; ++i) Enqueue(RandomGang(leaves_[rng_() % leaves_.size()]));
    std::vector<GangId> live;
    for (const auto& [id, r] : requests_) live.push_back(id);
    std::sort(live.begin(), live.end());
    std::shuffle(live.begin(), live.end(), rng_);
    const int cancels =
        std::min<int>(static_cast<int>(Uniform(rng_, 0, 3)), static_cast<int>(live.size()));
    for (int i = 0; i < cancels; ++i) {
      ASSERT_TRUE(rm_.Cancel(live[i]).ok());
      requests_.erase(live[i]);
    }
  }

  // Cycles until quiet; checks the properties along the way.
  void Settle() {
    const int hysteresis = config_.preemption.hysteresis_cycles;
    const int budget = 25;
    int last_noisy = 0;  // the last cycle with a preemption or a pool above its entitlement
    for (int cycle = 1; cycle <= budget; ++cycle) {
      SCOPED_TRACE(::testing::Message() << "cycle " << cycle);
      clock_.AdvanceBy(absl::Seconds(1));
      CycleResult r = rm_.RunCycle(CycleInput{capacity_, Resources()}, clock_.Now());
      for (const AdmittedGang& a : r.admitted) {
        for (const TaskRequest& t : requests_.at(a.gang).tasks) {
          ASSERT_TRUE(rm_.MarkRunning(t.id, clock_.Now()).ok());
        }
      }
      Resources preempted;
      for (const PreemptionDecision& d : r.preempted) {
        ASSERT_NE(d.sla, SlaClass::kNonPreemptible) << "gang " << d.gang.value();
        ++by_cause_[static_cast<int>(d.cause)];
        preempted += d.resources;
        for (const TaskId& t : d.tasks) {
          ASSERT_TRUE(preempted_this_change_.insert(t).second)
              << "task " << t.ToString() << " preempted twice for one change: " << d.reason;
          ASSERT_TRUE(rm_.Release(t).ok());
        }
        // The job wants it back: requeue in the same turn.
        GangRequest again = requests_.at(d.gang);
        requests_.erase(d.gang);
        again.id = GangId(next_gang_++);
        ASSERT_TRUE(rm_.Enqueue(again, clock_.Now()).ok());
        requests_[again.id] = again;
      }
      if (r.preempted.size() > 1) {
        ASSERT_TRUE(preempted.FitsIn(config_.preemption.max_per_cycle)) << preempted.ToString();
      }
      bool within = true;
      const std::vector<PoolStats> stats = rm_.AllStats();
      for (PoolId leaf : leaves_) {
        const PoolStats& s = stats[leaf.value()];
        within &= s.by_class.regular().FitsIn(s.entitlement);
        within &= s.by_class.revocable.FitsIn(s.slack_entitlement);
      }
      if (!r.preempted.empty() || !within) last_noisy = cycle;
    }
    // Quiet for the last stretch (longer than any hysteresis), and within entitlement.
    ASSERT_LE(last_noisy, budget - hysteresis - 5) << "did not settle";
    max_settle_ = std::max(max_settle_, last_noisy);
    // Work that finishes makes the next change.
    std::vector<GangId> admitted;
    for (const auto& [id, r] : requests_) {
      absl::StatusOr<GangView> v = rm_.DescribeGang(id);
      if (v.ok() && v->state == GangState::kAdmitted) admitted.push_back(id);
    }
    std::sort(admitted.begin(), admitted.end());
    const int finishes =
        std::min<int>(static_cast<int>(Uniform(rng_, 0, 3)), static_cast<int>(admitted.size()));
    for (int i = 0; i < finishes; ++i) {
      const GangId id = admitted[rng_() % admitted.size()];
      if (!requests_.contains(id)) continue;
      ASSERT_TRUE(rm_.Cancel(id).ok());
      requests_.erase(id);
    }
  }

  std::mt19937_64& rng_;
  ResourceManagerConfig config_;
  ResourceManager rm_;
  SimulatedClock clock_;
  Resources capacity_;
  std::vector<PoolId> leaves_;
  absl::flat_hash_map<GangId, GangRequest> requests_;
  absl::flat_hash_set<TaskId> preempted_this_change_;
  uint64_t next_gang_ = 1;
  uint64_t next_job_ = 1;
  int epoch_ = 0;
  int max_settle_ = 0;
  std::array<int, 3> by_cause_{};
};

TEST(PreemptionPropertyTest, ConvergesWithoutPingPongOverRandomDemandChanges) {
  SCOPED_TRACE(::testing::Message() << "seed=" << kSeed);
  std::mt19937_64 rng(kSeed);
  int worst = 0;
  std::array<int, 3> by_cause{};
  for (int s = 0; s < kScenarios; ++s) {
    SCOPED_TRACE(::testing::Message() << "scenario " << s);
    Scenario scenario(rng);
    ASSERT_NO_FATAL_FAILURE(scenario.Run());
    worst = std::max(worst, scenario.max_cycles_to_settle());
    for (int c = 0; c < 3; ++c) by_cause[c] += scenario.preemptions_by_cause()[c];
  }
  std::cout << "worst cycles to settle after a change: " << worst
            << "; preempted gangs: over entitlement " << by_cause[0] << ", over slack "
            << by_cause[1] << ", for a higher-priority gang " << by_cause[2] << "\n";
  // The scenarios must exercise every kind of preemption, or they prove little.
  for (int c = 0; c < 3; ++c) EXPECT_GT(by_cause[c], 0) << "cause " << c;
}

}  // namespace
}  // namespace paceline::resmgr
