// Backfill: the reservation of a lane's first gang, the gangs admitted ahead of it, and the
// reasons of those that wait. A 100-cpu cluster, one pool, unless a test says otherwise.
#include "resmgr/backfill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "resmgr/rm_harness.h"

namespace paceline::resmgr {
namespace {

using testing::Cpu;
using ::testing::ElementsAre;
using testing::G;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::RmHarness;
using testing::Spec;

// Gang 1 (60 cpu, killed after 1h) runs from the first cycle; returns its end bound.
absl::Time RunFirst(RmHarness& h, PoolId a, absl::Duration limit = absl::Hours(1)) {
  h.Add(G(1, a, 60).Limit(limit));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1));
  h.Start(1);
  return h.now() + limit;
}

GangId AheadOf(const CycleResult& r, uint64_t gang) {
  for (const AdmittedGang& a : r.admitted) {
    if (a.gang.value() == gang) return a.backfilled_ahead_of;
  }
  ADD_FAILURE() << "gang " << gang << " was not admitted";
  return GangId();
}

TEST(BackfillTest, AGangThatEndsBeforeTheReservationStartsAheadOfIt) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));     // waits for gang 1's 60
  h.Add(G(3, a, 10).Limit(absl::Minutes(10)));  // fits now, ends long before
  h.Add(G(4, a, 10));                           // fits now, but no limit: never backfilled
  h.Add(G(5, a, 15).Limit(absl::Hours(2)));     // fits now and beside gang 2 at end1 (20 left)
  h.Add(G(6, a, 10).Limit(absl::Hours(2)));     // fits now (85 + 10), not beside gang 2 (5 left)
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3, 5));
  EXPECT_EQ(AheadOf(r, 3), GangId(2));
  EXPECT_EQ(AheadOf(r, 5), GangId(2));

  const WaitReason head = h.Reason(2);
  EXPECT_EQ(head.code, WaitCode::kReserved);
  EXPECT_EQ(head.cap, CapKind::kEntitlement);
  EXPECT_EQ(head.other, GangId(2));
  EXPECT_EQ(absl::Time(head.at), end1);
  EXPECT_EQ(h.Why(2),
            "cpu: pool /a holds 60 of regular work and the gang asks 80, above its entitlement "
            "100; reserved for gang 2 from 2020-01-01T01:00:02Z at the latest (as running tasks "
            "reach max_running_time)");
  for (uint64_t behind : {4, 6}) {
    EXPECT_EQ(h.Reason(behind).code, WaitCode::kBlockedBehind) << behind;
    EXPECT_EQ(h.Reason(behind).other, GangId(2)) << behind;
    EXPECT_EQ(absl::Time(h.Reason(behind).at), end1) << behind;
  }
  EXPECT_THAT(h.Why(4), HasSubstr("reserved for gang 2 from 2020-01-01T01:00:02Z; this gang is "
                                  "backfilled ahead of it only if"));
}

TEST(BackfillTest, TheReservedGangStartsWhenTheCapacityIsFreed) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));
  h.Add(G(3, a, 20).Limit(absl::Hours(3)));  // beside gang 2 at end1: 100 - 80 = 20 left
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3));
  h.Start(3);
  // Gang 1 is killed at its limit; gang 2 starts in the next cycle, beside gang 3.
  h.Advance(end1 - h.now());
  ASSERT_TRUE(h.rm().Release(h.Tasks(1)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(AheadOf(r, 2), GangId());
}

TEST(BackfillTest, AGangThatWouldDelayTheReservationWaits) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));
  // Fits now (60 + 30 <= 100) but ends after end1 and does not fit beside gang 2 (20 left).
  h.Add(G(3, a, 30).Limit(absl::Hours(1) + absl::Seconds(1)));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(absl::Time(h.Reason(3).at), end1);
  // Gang 1 ends early: gang 2 starts at once, and gang 3, first now, has the reservation until
  // gang 2's limit (admitted, not yet running: from its admission).
  h.Advance(absl::Minutes(30));
  ASSERT_TRUE(h.rm().Release(h.Tasks(1)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kReserved);
  EXPECT_EQ(absl::Time(h.Reason(3).at), h.now() + absl::Hours(1));
}

TEST(BackfillTest, NoReservationWhileWorkWithoutALimitHoldsTheRoom) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 60));  // no limit: never ends for backfill
  h.Cycle();
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));
  h.Add(G(3, a, 10).Limit(absl::Minutes(1)));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());  // strict head of line, as without backfill
  EXPECT_EQ(h.Reason(2).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(absl::Time(h.Reason(3).at), absl::InfinitePast());
}

TEST(BackfillTest, TheKnobTurnsItOff) {
  ResourceManagerConfig config;
  config.backfill = false;
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a");
  RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));
  h.Add(G(3, a, 30).Limit(absl::Minutes(10)));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_EQ(h.Reason(2).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
}

TEST(BackfillTest, TheEstimatePredictsTheStart) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 60).Limit(absl::Hours(1)).Estimate(absl::Minutes(20)));
  h.Cycle();
  h.Start(1);
  const absl::Time started = h.now();
  h.Add(G(2, a, 80));
  h.Cycle();
  const WaitReason w = h.Reason(2);
  EXPECT_EQ(w.code, WaitCode::kReserved);
  EXPECT_EQ(absl::Time(w.at), started + absl::Hours(1));
  EXPECT_EQ(absl::Time(w.predicted), started + absl::Minutes(20));
  EXPECT_THAT(h.Why(2), HasSubstr(", predicted 2020-01-01T00:20:02Z by expected_running_time"));
}

TEST(BackfillTest, OnlyTheLaneOfTheReservedGang) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(50));  // reservation 50
  h.Add(G(1, a, 40).NonPreemptible().Limit(absl::Hours(1)));
  h.Cycle();
  h.Start(1);
  const absl::Time end1 = h.now() + absl::Hours(1);
  h.Add(G(2, a, 30).NonPreemptible());                          // 40 + 30 > 50
  h.Add(G(3, a, 10).NonPreemptible().Limit(absl::Minutes(5)));  // ends before end1
  h.Add(G(4, a, 10).NonPreemptible().Limit(absl::Hours(2)));    // 50 - 30 = 20 beside it
  h.Add(G(5, a, 15).NonPreemptible().Limit(absl::Hours(2)));    // 10 left beside it: waits
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kReserved);
  EXPECT_EQ(h.Reason(2).cap, CapKind::kReservation);
  EXPECT_EQ(absl::Time(h.Reason(2).at), end1);
  EXPECT_THAT(h.Why(2), HasSubstr("of non-preemptible work and the gang asks 30, above its "
                                  "reservation (non-preemptible work runs only within it) 50"));
  // Gang 4 fits beside gang 2 at end1 but not now (40 + 10 + 10 = 60 > 50).
  EXPECT_EQ(h.Reason(4).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(h.Reason(5).code, WaitCode::kBlockedBehind);
}

TEST(BackfillTest, TheDepthBoundsTheLookBehindTheReservation) {
  ResourceManagerConfig config;
  config.backfill_depth = 2;
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a");
  RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));
  h.Add(G(3, a, 50).Limit(absl::Minutes(1)));  // does not fit now
  h.Add(G(4, a, 50).Limit(absl::Minutes(1)));  // does not fit now
  h.Add(G(5, a, 10).Limit(absl::Minutes(1)));  // would fit, but is third behind it
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_EQ(h.Reason(5).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(h.Reason(5).other, GangId(2));
}

// A lane's walk skips a gang that repeats the last miss (same job, same request): a gang of the
// job with another request and a gang of another job are each looked at; the skipped ones
// count towards the depth.
TEST(BackfillTest, AGangRepeatingTheLastMissOfItsJobIsSkippedAndCountsTowardsTheDepth) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));               // reserved: 20 left beside it
  h.Add(G(3, a, 50).Job(30, 0).Limit(absl::Hours(2)));    // does not fit now
  h.Add(G(4, a, 50).Job(30, 1).Limit(absl::Hours(2)));    // repeats gang 3's miss
  h.Add(G(5, a, 10).Job(30, 2).Limit(absl::Minutes(1)));  // same job, another request: fits
  h.Add(G(6, a, 5).Job(31, 0).Limit(absl::Hours(2)));     // fits beside gang 2: 15 left
  h.Add(G(7, a, 5).Job(31, 1).Limit(absl::Hours(2)));     // the same: 10 left
  h.Add(G(8, a, 25).Job(32, 0).Limit(absl::Hours(2)));    // not beside gang 2
  h.Add(G(9, a, 10).Job(33, 0).Limit(absl::Hours(2)));    // another job: beside gang 2
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(5, 6, 7, 9));

  ResourceManagerConfig config;
  config.backfill_depth = 3;
  RmHarness d(Cpu(100), config);
  PoolId b = d.Pool("/b");
  RunFirst(d, b);
  d.Add(G(2, b, 80).Limit(absl::Hours(1)));
  for (uint64_t g = 3; g <= 5; ++g) {  // three misses of one job: the depth is reached
    d.Add(G(g, b, 50).Job(30, static_cast<uint32_t>(g)).Limit(absl::Hours(2)));
  }
  d.Add(G(6, b, 10).Limit(absl::Minutes(1)));  // would fit, but is fourth behind gang 2
  EXPECT_THAT(d.Cycle().admitted, IsEmpty());
  EXPECT_EQ(d.Reason(6).code, WaitCode::kBlockedBehind);
}

// A walk behind a reservation that admitted nothing is not walked again while its pool, its
// queue and the reservation stay as they were (Admitter::LaneWalk); a gang enqueued, or room
// freed, has it walked again at the next cycle.
TEST(BackfillTest, AWalkThatAdmittedNothingIsWalkedAgainOnceItsQueueOrItsPoolChanges) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(10, a, 20).Limit(absl::Hours(3)));
  ASSERT_THAT(RmHarness::AdmittedIds(h.Cycle()), ElementsAre(10));
  h.Start(10);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));  // reserved from end1, nothing left beside it
  h.Add(G(3, a, 15).Limit(absl::Hours(2)));  // fits now, but neither ends by end1 nor beside
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(h.Cycle().admitted, IsEmpty()) << i;
    EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
    EXPECT_EQ(h.Reason(3).other, GangId(2));
    EXPECT_EQ(absl::Time(h.Reason(3).at), end1);
  }
  h.Add(G(4, a, 5).Limit(absl::Minutes(5)));  // the queue changes: ends by end1
  EXPECT_THAT(RmHarness::AdmittedIds(h.Cycle()), ElementsAre(4));
  EXPECT_THAT(h.Cycle().admitted, IsEmpty());
  ASSERT_TRUE(h.rm().Release(h.Tasks(10).front()).ok());  // 20 beside gang 2 from end1 now
  EXPECT_THAT(RmHarness::AdmittedIds(h.Cycle()), ElementsAre(3));
}

// A gate that answers from a table: gang -> when its hosts free (absent: it finds hosts now).
class TableGate final : public HostGate {
 public:
  std::optional<absl::Time> HostsFreeAt(GangId gang, absl::Time, absl::Time) override {
    ++asked;
    auto it = free_at.find(gang.value());
    return it == free_at.end() ? std::nullopt : std::optional<absl::Time>(it->second);
  }
  bool FitsNow(GangId gang, absl::Time) override {
    ++fits_asked;
    return !no_room.contains(gang.value());
  }
  uint64_t Version() const override { return version; }
  absl::flat_hash_set<uint64_t> no_room;
  uint64_t version = 0;
  int fits_asked = 0;
  absl::flat_hash_map<uint64_t, absl::Time> free_at;
  int asked = 0;
};

TEST(BackfillTest, AGangThatFitsItsBoundsButNotTheHostsWaitsAndTheLaneIsBackfilledAroundIt) {
  RmHarness h;
  TableGate gate;
  h.set_hosts(&gate);
  PoolId a = h.Pool("/a");
  RunFirst(h, a);                                             // 60 cpu until 1h
  h.Add(G(2, a, 0).Tasks(2, Cpu(15)).Limit(absl::Hours(1)));  // 30: fits the pool now
  const absl::Time hosts_free = h.now() + absl::Minutes(30);
  gate.free_at[2] = hosts_free;
  h.Add(G(3, a, 5).Limit(absl::Minutes(10)));  // ends before the hosts free
  h.Add(G(4, a, 10).Limit(absl::Hours(2)));    // beside gang 2 then: 100 - 60 - 30 = 10
  h.Add(G(5, a, 5).Limit(absl::Hours(2)));     // nothing left beside it
  h.Add(G(6, a, 0).Tasks(2, Cpu(1)).Limit(absl::Minutes(10)));  // ends by then, but no hosts
  gate.no_room.insert(6);
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3, 4));
  EXPECT_EQ(AheadOf(r, 3), GangId(2));
  const WaitReason head = h.Reason(2);
  EXPECT_EQ(head.code, WaitCode::kWaitingForHosts);
  EXPECT_EQ(head.asked, 2);
  EXPECT_EQ(absl::Time(head.at), hosts_free);
  EXPECT_EQ(absl::Time(head.predicted), hosts_free);
  EXPECT_THAT(h.Why(2), HasSubstr("pool /a has room for the gang, but its 2 tasks do not fit on "
                                  "the hosts yet"));
  EXPECT_THAT(h.Why(2), HasSubstr("hosts are held for gang 2"));
  for (uint64_t behind : {5, 6}) EXPECT_EQ(h.Reason(behind).code, WaitCode::kBlockedBehind);

  // Gang 3 ends and the gate finds hosts: gang 2 is admitted.
  for (const TaskId& t : h.Tasks(3)) ASSERT_TRUE(h.rm().Release(t).ok());
  gate.free_at.clear();
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
}

TEST(BackfillTest, AGangWaitingForItsBoundsIsReservedFromWhenItsHostsFreeWhenThatIsLater) {
  RmHarness h;
  TableGate gate;
  h.set_hosts(&gate);
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(2, a, 0).Tasks(2, Cpu(25)).Limit(absl::Hours(1)));  // 50: waits for gang 1
  gate.free_at[2] = end1 + absl::Hours(1);
  h.Cycle();
  EXPECT_EQ(h.Reason(2).code, WaitCode::kReserved);
  EXPECT_EQ(absl::Time(h.Reason(2).at), end1 + absl::Hours(1));
  // Without the gate's time the bounds' own: gang 1's end.
  gate.free_at.clear();
  h.Cycle();
  EXPECT_EQ(absl::Time(h.Reason(2).at), end1);
}

// A one-task gang behind a reserved one is backfilled only when the gate finds it a host: held
// pool capacity it cannot use would only fail placement. The walk that heard "no" is not
// walked again until the gate's version moves.
TEST(BackfillTest, AOneTaskGangIsBackfilledOnlyWhenTheGateFindsItAHost) {
  RmHarness h;
  TableGate gate;
  h.set_hosts(&gate);
  PoolId a = h.Pool("/a");
  const absl::Time end1 = RunFirst(h, a);
  h.Add(G(2, a, 80).Limit(absl::Hours(1)));   // reserved from end1
  h.Add(G(3, a, 5).Limit(absl::Minutes(5)));  // ends by end1, but no host has room
  gate.no_room.insert(3);
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(h.Cycle().admitted, IsEmpty()) << i;
    EXPECT_EQ(gate.fits_asked, 1) << i;  // the second walk is the first one again
    EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
    EXPECT_EQ(absl::Time(h.Reason(3).at), end1);
  }
  gate.no_room.clear();  // a host frees: the gate's version moves
  EXPECT_THAT(h.Cycle().admitted, IsEmpty());
  ++gate.version;
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3));
  EXPECT_EQ(AheadOf(r, 3), GangId(2));
  EXPECT_EQ(gate.fits_asked, 2);
}

TEST(BackfillTest, HostsFreeAtIsAskedOnlyWithBackfillAndOnlyForGangsOfSeveralTasks) {
  ResourceManagerConfig off;
  off.backfill = false;
  for (bool backfill : {true, false}) {
    RmHarness h(Cpu(100), backfill ? ResourceManagerConfig() : off);
    TableGate gate;
    gate.free_at[1] = h.now() + absl::Hours(5);
    gate.free_at[2] = h.now() + absl::Hours(5);
    h.set_hosts(&gate);
    PoolId a = h.Pool("/a");
    h.Add(G(1, a, 10));                   // one task: never asked
    h.Add(G(2, a, 0).Tasks(2, Cpu(10)));  // asked with backfill only
    CycleResult r = h.Cycle();
    EXPECT_EQ(gate.asked, backfill ? 1 : 0);
    const std::vector<uint64_t> admitted =
        backfill ? std::vector<uint64_t>{1} : std::vector<uint64_t>{1, 2};
    EXPECT_EQ(RmHarness::AdmittedIds(r), admitted);
  }
}

}  // namespace
}  // namespace paceline::resmgr
