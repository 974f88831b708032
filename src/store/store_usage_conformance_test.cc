// The conformance suite (store_conformance_test.cc instantiates it for every backend), on usage
// accounting (records/usage.h): sums added by key (hour, pool, job, owner, user), listed in key
// order by a time range of whole hours and a pool's subtree, pruned by hour, kept across a
// reopen, all or nothing with their commit, and copied by `paceline store migrate`.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/copy_store.h"
#include "store/fault_injecting_store.h"
#include "store/memory_store.h"
#include "store/testing/store_conformance.h"

namespace paceline::store {
namespace {

using conformance::StoreConformance;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kHour = 3600;

records::UsageRecord Usage(int64_t hour, const std::string& pool, uint64_t job,
                           const std::string& user, int64_t cpu, int64_t tasks = 1) {
  records::UsageRecord u;
  u.hour = absl::FromUnixSeconds(1'800'000'000 / kHour * kHour + hour * kHour);
  u.pool = pool;
  u.job = JobId(job);
  u.owner = "team-" + user;
  u.user = user;
  u.job_name = "job-" + std::to_string(job);
  u.cpu_milli_seconds = cpu;
  u.memory_byte_seconds = cpu * (int64_t{1} << 20);  // large: ~2^50 for a day of a core
  u.gpu_milli_seconds = cpu / 4;
  u.tasks = tasks;
  return u;
}

absl::Time Hour(int64_t hour) { return Usage(hour, "/", 1, "", 0).hour; }

std::vector<records::UsageRecord> MustList(Store& s, const records::UsageQuery& q = {}) {
  absl::StatusOr<std::vector<records::UsageRecord>> rows = s.ListUsage(q);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *rows : std::vector<records::UsageRecord>{};
}

TEST_P(StoreConformance, UsageAddsUpByKeyAndListsInKeyOrder) {
  EXPECT_THAT(MustList(*store_), IsEmpty());
  records::WriteBatch b;
  // Two of the same key in one batch, and keys that differ in each part.
  b.add_usage = {Usage(1, "/b", 2, "bob", 5'000),
                 Usage(0, "/a", 1, "alice", 1'000),
                 Usage(0, "/a", 1, "alice", 250'000'000'000, 2),
                 Usage(0, "/a", 1, "carol", 7),
                 Usage(0, "/a", 3, "alice", 9),
                 Usage(0, "/a/x", 1, "alice", 11)};
  ASSERT_TRUE(store_->Commit(b).ok());
  records::WriteBatch later;
  records::UsageRecord renamed = Usage(1, "/b", 2, "bob", 500, 3);
  renamed.job_name = "renamed";
  later.add_usage = {renamed};
  ASSERT_TRUE(store_->Commit(later).ok());

  records::UsageRecord a1 = Usage(0, "/a", 1, "alice", 250'000'001'000, 3);
  records::UsageRecord b2 = Usage(1, "/b", 2, "bob", 5'500, 4);
  b2.job_name = "renamed";
  b2.memory_byte_seconds = 5'500 * (int64_t{1} << 20);
  b2.gpu_milli_seconds = 5'000 / 4 + 500 / 4;
  EXPECT_THAT(MustList(*store_),
              ElementsAre(a1, Usage(0, "/a", 1, "carol", 7), Usage(0, "/a", 3, "alice", 9),
                          Usage(0, "/a/x", 1, "alice", 11), b2));
}

TEST_P(StoreConformance, UsageListsWholeHoursOfAPoolSubtree) {
  records::WriteBatch b;
  b.add_usage = {Usage(0, "/a", 1, "u", 1), Usage(1, "/a/x", 1, "u", 2), Usage(2, "/ab", 2, "u", 3),
                 Usage(3, "/b", 3, "u", 4)};
  ASSERT_TRUE(store_->Commit(b).ok());
  auto cpu = [](const std::vector<records::UsageRecord>& rows) {
    std::vector<int64_t> out;
    for (const records::UsageRecord& r : rows) out.push_back(r.cpu_milli_seconds);
    return out;
  };
  // `since` inside hour 1 still reads all of hour 1; `until` is exclusive.
  EXPECT_THAT(cpu(MustList(*store_, {Hour(1) + absl::Minutes(59), Hour(3), ""})),
              ElementsAre(2, 3));
  EXPECT_THAT(cpu(MustList(*store_, {absl::InfinitePast(), absl::InfiniteFuture(), "/a"})),
              ElementsAre(1, 2));
  EXPECT_THAT(cpu(MustList(*store_, {absl::InfinitePast(), absl::InfiniteFuture(), "/"})),
              ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(cpu(MustList(*store_, {Hour(1), absl::InfiniteFuture(), "/a/x"})), ElementsAre(2));
  EXPECT_THAT(MustList(*store_, {Hour(4), absl::InfiniteFuture(), ""}), IsEmpty());
}

TEST_P(StoreConformance, UsagePrunedBeforeAnHourKeepsTheLaterHours) {
  records::WriteBatch b;
  b.add_usage = {Usage(0, "/a", 1, "u", 1), Usage(1, "/a", 1, "u", 2), Usage(2, "/a", 1, "u", 3)};
  ASSERT_TRUE(store_->Commit(b).ok());
  records::WriteBatch prune;
  prune.prune_usage_before = Hour(2);
  ASSERT_TRUE(store_->Commit(prune).ok());
  EXPECT_THAT(MustList(*store_), ElementsAre(Usage(2, "/a", 1, "u", 3)));
}

TEST_P(StoreConformance, UsageSurvivesReopenWhenDurable) {
  if (!GetParam().durable) GTEST_SKIP() << GetParam().name << " is not durable by design";
  records::WriteBatch b;
  b.add_usage = {Usage(0, "/a", 1, "u", 12)};
  ASSERT_TRUE(store_->Commit(b).ok());
  store_.reset();
  store_ = GetParam().open(dir_);
  ASSERT_NE(store_, nullptr);
  ASSERT_TRUE(store_->Commit(b).ok());  // adds to the stored row
  EXPECT_THAT(MustList(*store_), ElementsAre(Usage(0, "/a", 1, "u", 24, 2)));
}

TEST_P(StoreConformance, AFailedCommitAddsNoUsage) {
  records::WriteBatch b = FullBatch();
  b.add_usage = {Usage(0, "/ads", 7, "alice", 100)};
  ASSERT_TRUE(store_->Commit(b).ok());
  FaultInjectingStore faulty(store_.get());
  faulty.FailNextCommits(1);
  records::WriteBatch again;
  again.put_tasks = {conformance::Task(7, 1, TaskState::kSucceeded)};
  again.add_usage = {Usage(0, "/ads", 7, "alice", 100), Usage(1, "/ads", 7, "alice", 5)};
  EXPECT_EQ(faulty.Commit(again).code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(MustList(*store_), ElementsAre(Usage(0, "/ads", 7, "alice", 100)));
  ASSERT_TRUE(faulty.Commit(again).ok());
  EXPECT_THAT(MustList(*store_),
              ElementsAre(Usage(0, "/ads", 7, "alice", 200, 2), Usage(1, "/ads", 7, "alice", 5)));
}

TEST_P(StoreConformance, UsageIsCopiedAndADifferenceIsNamed) {
  records::WriteBatch b = FullBatch();
  b.add_usage = {Usage(0, "/ads", 7, "alice", 100), Usage(5, "/web", 9, "bob", 3)};
  ASSERT_TRUE(store_->Commit(b).ok());
  MemoryStore copy;
  ASSERT_TRUE(CopyStore(*store_, copy).ok());
  EXPECT_TRUE(CompareStores(*store_, copy).ok());
  EXPECT_EQ(MustList(copy), MustList(*store_));
  records::WriteBatch more;
  more.add_usage = {Usage(5, "/web", 9, "bob", 1)};
  ASSERT_TRUE(copy.Commit(more).ok());
  absl::Status differs = CompareStores(*store_, copy);
  EXPECT_EQ(differs.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(differs.message(), ::testing::HasSubstr("usage"));
  // Into the backend under test, from memory.
  MemoryStore source;
  records::WriteBatch s;
  s.add_usage = {Usage(2, "/q", 4, "dan", 42)};
  ASSERT_TRUE(source.Commit(s).ok());
  store_.reset();
  std::filesystem::remove_all(dir_);
  store_ = GetParam().open(dir_ + "-target");
  ASSERT_NE(store_, nullptr);
  ASSERT_TRUE(CopyStore(source, *store_).ok());
  EXPECT_THAT(MustList(*store_), ElementsAre(Usage(2, "/q", 4, "dan", 42)));
  store_.reset();
  std::filesystem::remove_all(dir_ + "-target");
}

}  // namespace
}  // namespace paceline::store
