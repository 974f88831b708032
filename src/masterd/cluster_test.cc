// The Cluster applies the core's changes durably before answering: a store that fails makes
// the call answer UNAVAILABLE, leaves nothing of the change in the store, and the cluster
// refuses further changes (its memory would otherwise run ahead of the store) until it has
// reloaded from the store by itself.

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

scheduler::CoreConfig Core() { return scheduler::CoreConfig{}; }

// Retries `fn` until it succeeds or `timeout` passes; returns the last status.
absl::Status Eventually(const std::function<absl::Status()>& fn, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  absl::Status s = fn();
  while (!s.ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
    s = fn();
  }
  return s;
}

bool InCore(Cluster& cluster, const std::string& pool) {
  bool found = false;
  cluster.RunRead([&](const scheduler::SchedulerCore& core) {
    found = core.resources().tree().Find(pool).has_value();
  });
  return found;
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
  // Until the cluster has reloaded from the store, further changes are refused too.
  absl::Status next = cluster.Mutate(CreatePool("/b"));
  EXPECT_EQ(next.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(next.message(), HasSubstr("reloads from it by itself"));
  EXPECT_TRUE(memory.Load()->pools.empty());
  // The store answers again: within seconds the cluster has reloaded, without "/a", and takes
  // changes again.
  EXPECT_TRUE(Eventually([&] { return cluster.Mutate(CreatePool("/b")); }, absl::Seconds(10)).ok());
  EXPECT_FALSE(InCore(cluster, "/a"));
  EXPECT_TRUE(InCore(cluster, "/b"));
  ASSERT_EQ(memory.Load()->pools.size(), 1u);
  EXPECT_EQ(memory.Load()->pools[0].path, "/b");
  cluster.Stop();
}

TEST(Cluster, ReloadingKeepsTryingWhileTheStoreFails) {
  store::MemoryStore memory;
  store::FaultInjectingStore faulty(&memory);
  Cluster cluster(Core(), &faulty, ClusterOptions{absl::Milliseconds(5)});
  ASSERT_TRUE(cluster.Start().ok());
  faulty.FailNextCommits(3);  // the change, then the first two reloads fail
  EXPECT_EQ(cluster.Mutate(CreatePool("/a")).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Eventually([&] { return cluster.Mutate(CreatePool("/a")); }, absl::Seconds(15)).ok());
  EXPECT_EQ(faulty.failed_commits(), 3);
  EXPECT_EQ(memory.Load()->pools.size(), 1u);
  cluster.Stop();
}

}  // namespace
}  // namespace paceline::masterd
