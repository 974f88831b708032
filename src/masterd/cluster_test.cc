// The Cluster applies the core's changes durably before answering: a store that fails makes
// the call answer UNAVAILABLE, leaves nothing of the change in the store, and the cluster
// refuses further changes (its memory would otherwise run ahead of the store).

#include "masterd/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/fault_injecting_store.h"
#include "store/memory_store.h"

namespace paceline::masterd {
namespace {

using ::testing::HasSubstr;

PoolSpec Pool() {
  PoolSpec p;
  p.dim(Dim::kCpu).reservation = 1000;
  return p;
}

std::unique_ptr<scheduler::SchedulerCore> Core() {
  auto core = scheduler::SchedulerCore::Create(scheduler::CoreConfig{});
  return core.ok() ? std::move(*core) : nullptr;
}

Cluster::MutateFn CreatePool(const std::string& path) {
  return [path](scheduler::SchedulerCore& core, absl::Time, scheduler::Actions& out) {
    return core.pools().CreatePool(path, Pool(), out);
  };
}

TEST(Cluster, ChangesAreDurableWhenAnswered) {
  store::MemoryStore memory;
  Cluster cluster(Core(), &memory, ClusterOptions{absl::Milliseconds(5)});
  ASSERT_TRUE(cluster.Start().ok());
  ASSERT_TRUE(cluster.Mutate(CreatePool("/a")).ok());
  auto contents = memory.Load();
  ASSERT_EQ(contents->pools.size(), 1u);
  EXPECT_EQ(contents->pools[0].path, "/a");
  // A refused change (the core validates first) writes nothing.
  absl::Status dup = cluster.Mutate(CreatePool("/a"));
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists) << dup;
  EXPECT_EQ(memory.Load()->pools.size(), 1u);
  cluster.Stop();
}

TEST(Cluster, AFailedCommitAnswersUnavailableAndNothingIsKept) {
  store::MemoryStore memory;
  store::FaultInjectingStore faulty(&memory);
  Cluster cluster(Core(), &faulty, ClusterOptions{absl::Milliseconds(5)});
  ASSERT_TRUE(cluster.Start().ok());
  faulty.FailNextCommits(1);
  absl::Status s = cluster.Mutate(CreatePool("/a"));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("store is unavailable"));
  EXPECT_TRUE(memory.Load()->pools.empty());
  // Until a restart reloads the state from the store, further changes are refused too.
  absl::Status next = cluster.Mutate(CreatePool("/b"));
  EXPECT_EQ(next.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(next.message(), HasSubstr("restart the master"));
  EXPECT_TRUE(memory.Load()->pools.empty());
  cluster.Stop();

  // A restarted cluster over the same store has nothing of the failed change.
  Cluster restarted(Core(), &memory, ClusterOptions{absl::Milliseconds(5)});
  ASSERT_TRUE(restarted.Start().ok());
  EXPECT_TRUE(restarted.Mutate(CreatePool("/a")).ok());
  restarted.Stop();
}

}  // namespace
}  // namespace paceline::masterd
