// One conformance suite for every Store backend: memory, SQLite and PostgreSQL (a real server,
// started for the suite), each also behind the fault-injecting wrapper; plus the group
// committer on top of them. The fixture is store/testing/store_conformance.h; the tests of
// tokens, job owners and the audit log are in store_access_conformance_test.cc, those of
// secrets in store_secret_conformance_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "store/copy_store.h"
#include "store/fault_injecting_store.h"
#include "store/group_commit.h"
#include "store/load_queue.h"
#include "store/memory_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/testing/postgres_server.h"
#include "store/testing/store_conformance.h"

namespace paceline::store {
namespace {

using conformance::Backend;
using conformance::Event;
using conformance::StoreConformance;
using conformance::Task;
using conformance::ValidJobSpec;
using conformance::ValidPoolSpec;

TEST_P(StoreConformance, EmptyStoreLoadsEmpty) {
  records::StoreContents c = MustLoad();
  EXPECT_TRUE(c.pools.empty());
  EXPECT_TRUE(c.jobs.empty());
  EXPECT_TRUE(c.tasks.empty());
  EXPECT_TRUE(c.hosts.empty());
  EXPECT_TRUE(c.tokens.empty());
  EXPECT_TRUE(c.secrets.empty());
  EXPECT_EQ(c.next_job_id, 1u);
  absl::StatusOr<std::vector<records::AuditRecord>> audit = store_->ListAudit({});
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_TRUE(audit->empty());
}

TEST_P(StoreConformance, CommittedRecordsLoadBackEqual) {
  records::WriteBatch b = FullBatch();
  ASSERT_TRUE(store_->Commit(b).ok());
  records::StoreContents c = MustLoad();
  EXPECT_EQ(c.pools, b.put_pools);
  EXPECT_EQ(c.jobs, b.put_jobs);
  EXPECT_EQ(c.tasks, b.put_tasks);
  EXPECT_EQ(c.hosts, b.put_hosts);
  EXPECT_EQ(c.tokens, b.put_tokens);
  EXPECT_EQ(c.secrets, b.put_secrets);
  EXPECT_EQ(c.next_job_id, 8u);
}

// A streaming load hands over what Load returns: the head, then every task in batches.
TEST_P(StoreConformance, LoadIntoHandsOverWhatLoadReturns) {
  records::WriteBatch b = FullBatch();
  for (uint32_t i = 3; i < 40; ++i) b.put_tasks.push_back(Task(7, i, TaskState::kRunning));
  b.put_jobs.front().instances = 40;
  ASSERT_TRUE(store_->Commit(b).ok());
  records::StoreContents loaded = MustLoad();

  LoadQueue queue(2);
  std::thread loader([&] { queue.Close(store_->LoadInto(queue)); });
  std::optional<records::StoreContents> head = queue.WaitHead();
  ASSERT_TRUE(head.has_value());
  EXPECT_TRUE(head->tasks.empty());
  std::vector<records::TaskRecord> tasks;
  while (std::optional<std::vector<records::TaskRecord>> batch = queue.Next()) {
    EXPECT_TRUE(std::is_sorted(batch->begin(), batch->end(),
                               [](const auto& x, const auto& y) { return x.id < y.id; }));
    tasks.insert(tasks.end(), batch->begin(), batch->end());
  }
  EXPECT_TRUE(queue.Wait().ok());
  loader.join();
  std::sort(tasks.begin(), tasks.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  EXPECT_EQ(tasks, loaded.tasks);
  head->tasks = loaded.tasks;
  EXPECT_EQ(head->pools, loaded.pools);
  EXPECT_EQ(head->jobs, loaded.jobs);
  EXPECT_EQ(head->hosts, loaded.hosts);
  EXPECT_EQ(head->tokens, loaded.tokens);
  EXPECT_EQ(head->secrets, loaded.secrets);
  EXPECT_EQ(head->next_job_id, loaded.next_job_id);
  EXPECT_EQ(head->cluster_id, loaded.cluster_id);
}

TEST_P(StoreConformance, DeletedTasksAreGoneAndOthersStay) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch del;
  del.delete_tasks.push_back(TaskId{JobId(7), 2});
  ASSERT_TRUE(store_->Commit(del).ok());
  records::StoreContents c = MustLoad();
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.tasks[0].id, (TaskId{JobId(7), 0}));
}

TEST_P(StoreConformance, PutOverwritesByKey) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch b;
  records::TaskRecord t = Task(7, 0, TaskState::kSucceeded);
  t.run = 2;
  t.exit_code = 0;
  b.put_tasks.push_back(t);
  records::JobRecord j{JobId(7),
                       "/ads",
                       ValidJobSpec("etl", 5),
                       2,
                       records::JobGoal::kKill,
                       absl::FromUnixSeconds(500)};
  b.put_jobs.push_back(j);
  ASSERT_TRUE(store_->Commit(b).ok());
  records::StoreContents c = MustLoad();
  ASSERT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.tasks[0], t);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0], j);
}

// What a standby answers DNS from (docs/services.md): a run's checks and ports, and its host's
// address, each replaced by the next write and cleared by one without them.
TEST_P(StoreConformance, ChecksPortsAndHostAddressesAreReplacedByTheNextWrite) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::StoreContents c = MustLoad();
  ASSERT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.tasks[0].health, "HEALTHY");
  EXPECT_EQ(c.tasks[0].readiness, "NOT_READY");
  EXPECT_THAT(c.tasks[0].ports, ::testing::ElementsAre(31000, 31001));
  EXPECT_TRUE(c.tasks[1].ports.empty());
  ASSERT_EQ(c.hosts.size(), 1u);
  EXPECT_EQ(c.hosts[0].address, "198.18.0.7");

  records::WriteBatch b;
  records::TaskRecord ready = c.tasks[0];
  ready.readiness = "READY";
  ready.ports = {65535};
  records::TaskRecord cleared = c.tasks[1];
  cleared.health = "UNKNOWN";
  b.put_tasks = {ready, cleared};
  records::HostRecord moved = c.hosts[0];
  moved.address = "2001:db8::7";
  b.put_hosts = {moved};
  ASSERT_TRUE(store_->Commit(b).ok());
  c = MustLoad();
  EXPECT_THAT(c.tasks, ::testing::ElementsAre(ready, cleared));
  EXPECT_THAT(c.hosts, ::testing::ElementsAre(moved));

  ready.health.clear();
  ready.readiness.clear();
  ready.ports.clear();
  moved.address.clear();
  b.put_tasks = {ready};
  b.put_hosts = {moved};
  ASSERT_TRUE(store_->Commit(b).ok());
  c = MustLoad();
  EXPECT_EQ(c.tasks[0], ready);
  EXPECT_THAT(c.hosts, ::testing::ElementsAre(moved));
}

TEST_P(StoreConformance, EventsComeBackInOrderWithLimit) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch b;
  b.events.push_back(Event(7, 0, 1, TaskState::kSucceeded, 12));
  b.events.push_back(Event(7, 1, 1, TaskState::kLaunching, 13));  // another task
  ASSERT_TRUE(store_->Commit(b).ok());
  auto all = store_->ListEvents(TaskId{JobId(7), 0}, 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].state, TaskState::kLaunching);
  EXPECT_EQ((*all)[2].state, TaskState::kSucceeded);
  EXPECT_EQ((*all)[2], Event(7, 0, 1, TaskState::kSucceeded, 12));
  auto last2 = store_->ListEvents(TaskId{JobId(7), 0}, 2);
  ASSERT_TRUE(last2.ok());
  ASSERT_EQ(last2->size(), 2u);
  EXPECT_EQ((*last2)[0].state, TaskState::kRunning);
  auto none = store_->ListEvents(TaskId{JobId(99), 0}, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(StoreConformance, DeleteJobRemovesItsTasksAndEvents) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch other;
  other.put_jobs.push_back(records::JobRecord{JobId(8), "/ads", ValidJobSpec("other", 1), 1,
                                              records::JobGoal::kRun, absl::FromUnixSeconds(600)});
  other.put_tasks.push_back(Task(8, 0, TaskState::kRunning));
  ASSERT_TRUE(store_->Commit(other).ok());
  records::WriteBatch del;
  del.delete_jobs.push_back(JobId(7));
  ASSERT_TRUE(store_->Commit(del).ok());
  records::StoreContents c = MustLoad();
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].id, JobId(8));
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.tasks[0].id.job, JobId(8));
  EXPECT_TRUE(store_->ListEvents(TaskId{JobId(7), 0}, 0)->empty());
}

TEST_P(StoreConformance, ReadJobReturnsTheJobItsTasksAndEveryEventByInstance) {
  records::WriteBatch b = FullBatch();
  b.events.push_back(Event(7, 2, 1, TaskState::kFailed, 12));
  b.events.push_back(Event(8, 0, 1, TaskState::kRunning, 13));  // another job's
  ASSERT_TRUE(store_->Commit(b).ok());
  absl::StatusOr<std::optional<records::JobHistory>> h = store_->ReadJob(JobId(7));
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE(h->has_value());
  EXPECT_EQ((*h)->job, b.put_jobs[0]);
  EXPECT_EQ((*h)->tasks, b.put_tasks);
  ASSERT_EQ((*h)->events.size(), 3u);
  EXPECT_EQ((*h)->events[0], b.events[0]);
  EXPECT_EQ((*h)->events[1], b.events[1]);
  EXPECT_EQ((*h)->events[2], b.events[2]);
  absl::StatusOr<std::optional<records::JobHistory>> none = store_->ReadJob(JobId(99));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST_P(StoreConformance, StatsCountTheLiveRowsOfEachTable) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  absl::StatusOr<StoreStats> s = store_->Stats();
  ASSERT_TRUE(s.ok()) << s.status();
  std::map<std::string, int64_t> rows(s->rows.begin(), s->rows.end());
  // PostgreSQL has one table more: the events written before its blocks (schema version 9).
  EXPECT_EQ(rows.size(), GetParam().name == "postgres" ? 9u : 8u);
  if (GetParam().name != "postgres") {  // PostgreSQL's counts are the planner's estimates
    EXPECT_EQ(rows["jobs"], 1);
    EXPECT_EQ(rows["tasks"], 2);
    EXPECT_EQ(rows["events"], 2);
    EXPECT_EQ(rows["hosts"], 1);
  }
  if (GetParam().durable) {
    EXPECT_GT(s->bytes, 0);
  }
}

TEST_P(StoreConformance, CommitAllAppliesBatchesInOrder) {
  records::WriteBatch create;
  create.put_pools.push_back({"/x", ValidPoolSpec(1000)});
  records::WriteBatch remove;
  remove.delete_pools.push_back("/x");
  records::WriteBatch recreate;
  recreate.put_pools.push_back({"/x", ValidPoolSpec(2000)});
  ASSERT_TRUE(store_->CommitAll({&create, &remove, &recreate}).ok());
  records::StoreContents c = MustLoad();
  ASSERT_EQ(c.pools.size(), 1u);
  EXPECT_EQ(c.pools[0].spec, ValidPoolSpec(2000));
  ASSERT_TRUE(store_->CommitAll({&remove}).ok());
  EXPECT_TRUE(MustLoad().pools.empty());
}

TEST_P(StoreConformance, FailedCommitLeavesNoPartialState) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::StoreContents before = MustLoad();
  FaultInjectingStore faulty(store_.get());
  faulty.FailNextCommits(1);
  records::WriteBatch b;
  b.put_pools.push_back({"/new", ValidPoolSpec(1000)});
  b.put_tasks.push_back(Task(7, 1, TaskState::kRunning));
  b.delete_jobs.push_back(JobId(7));
  b.next_job_id = 100;
  absl::Status s = faulty.Commit(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  records::StoreContents after = MustLoad();
  EXPECT_EQ(after.pools, before.pools);
  EXPECT_EQ(after.jobs, before.jobs);
  EXPECT_EQ(after.tasks, before.tasks);
  EXPECT_EQ(after.next_job_id, before.next_job_id);
  // The next commit goes through.
  EXPECT_TRUE(faulty.Commit(b).ok());
  EXPECT_EQ(MustLoad().next_job_id, 100u);
}

TEST_P(StoreConformance, SurvivesReopenWhenDurable) {
  if (!GetParam().durable) GTEST_SKIP() << GetParam().name << " is not durable by design";
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  store_.reset();
  store_ = GetParam().open(dir_);
  records::StoreContents c = MustLoad();
  EXPECT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.next_job_id, 8u);
  EXPECT_EQ(c.tokens.size(), 1u);
  EXPECT_EQ(c.secrets.size(), 1u);
  EXPECT_EQ(c.jobs[0].owner, "alice");
  EXPECT_EQ(store_->ListEvents(TaskId{JobId(7), 0}, 0)->size(), 2u);
  EXPECT_EQ(store_->ListAudit(records::AuditQuery{})->size(), 1u);
}

TEST_P(StoreConformance, GroupCommitterCommitsEverythingFromManyThreads) {
  constexpr int kThreads = 4, kPerThread = 200;
  {
    GroupCommitter committer(store_.get());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          records::WriteBatch b;
          b.put_tasks.push_back(Task(1, t * kPerThread + i, TaskState::kRunning));
          if (i % 2 == 0) {
            ASSERT_TRUE(committer.CommitSync(std::move(b)).ok());
          } else {
            committer.Submit(std::move(b), [](absl::Status s) { ASSERT_TRUE(s.ok()); });
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    committer.RunOnWriter([](Store&) {});  // every batch is committed
    GroupCommitStats stats = committer.stats();
    EXPECT_EQ(stats.batches, static_cast<uint64_t>(kThreads * kPerThread));
    uint64_t bucketed = 0;
    for (uint64_t n : stats.commit_time_buckets) bucketed += n;
    EXPECT_EQ(bucketed, stats.commits);
    // The quantiles bound the commit times from above, within a factor of two.
    EXPECT_GE(stats.CommitTimeQuantile(1.0), stats.max_commit_time);
    EXPECT_LE(stats.CommitTimeQuantile(1.0), 2 * stats.max_commit_time + absl::Microseconds(2));
    EXPECT_LE(stats.CommitTimeQuantile(0.5), stats.CommitTimeQuantile(0.99));
  }
  EXPECT_EQ(MustLoad().tasks.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_P(StoreConformance, GroupCommitterReportsFailureToEveryBatchOfTheGroup) {
  FaultInjectingStore faulty(store_.get());
  faulty.FailNextCommits(1);
  GroupCommitter committer(&faulty);
  absl::Status first = committer.CommitSync(FullBatch());
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable);
  // A batch after a failed one never reaches the store on its own: it fails too, until the
  // owner has reloaded and resumes.
  EXPECT_EQ(committer.CommitSync(FullBatch()).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(faulty.failed_commits(), 1);
  EXPECT_TRUE(MustLoad().jobs.empty());
  committer.Resume();
  EXPECT_TRUE(committer.CommitSync(FullBatch()).ok());
  GroupCommitStats stats = committer.stats();
  EXPECT_EQ(stats.failed_commits, 1u);
  EXPECT_EQ(stats.batches, 2u);
}

TEST_P(StoreConformance, GroupCommitterReadsSeeEveryEarlierWrite) {
  GroupCommitter committer(store_.get());
  for (int i = 0; i < 50; ++i) {
    records::WriteBatch b;
    b.events.push_back(Event(7, 0, 1, TaskState::kRunning, i));
    committer.Submit(std::move(b), nullptr);
  }
  size_t seen = 0;
  committer.RunOnWriter([&](Store& s) { seen = s.ListEvents(TaskId{JobId(7), 0}, 0)->size(); });
  EXPECT_EQ(seen, 50u);
}

TEST_P(StoreConformance, EveryEventIsScannedByTaskIncludingRemovedInstances) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch b;
  b.events.push_back(Event(7, 2, 1, TaskState::kFailed, 20));
  b.events.push_back(Event(7, 0, 1, TaskState::kSucceeded, 21));
  b.delete_tasks.push_back(TaskId{JobId(7), 2});  // a scale-down keeps the history
  ASSERT_TRUE(store_->Commit(b).ok());
  std::vector<records::TaskEvent> seen;
  ASSERT_TRUE(store_
                  ->ForEachEvent([&](const records::TaskEvent& e) {
                    seen.push_back(e);
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], Event(7, 0, 1, TaskState::kLaunching, 10));
  EXPECT_EQ(seen[2], Event(7, 0, 1, TaskState::kSucceeded, 21));
  EXPECT_EQ(seen[3], Event(7, 2, 1, TaskState::kFailed, 20));
  // The callback's error stops the scan and comes back.
  int calls = 0;
  absl::Status stop = store_->ForEachEvent([&](const records::TaskEvent&) {
    ++calls;
    return absl::CancelledError("enough");
  });
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

TEST_P(StoreConformance, CopiesIntoAnEmptyStoreAndComparesEqual) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  MemoryStore copy;
  absl::StatusOr<CopyReport> r = CopyStore(*store_, copy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs, 1u);
  EXPECT_EQ(r->tasks, 2u);
  EXPECT_EQ(r->events, 2u);
  EXPECT_EQ(r->tokens, 1u);
  EXPECT_EQ(r->secrets, 1u);
  EXPECT_EQ(r->audit, 1u);
  EXPECT_TRUE(CompareStores(*store_, copy).ok());
  // A second copy into the now non-empty store is refused and changes nothing.
  absl::StatusOr<CopyReport> again = CopyStore(*store_, copy);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), ::testing::HasSubstr("not empty"));
  // Any difference is named.
  records::WriteBatch b;
  b.events.push_back(Event(7, 0, 1, TaskState::kSucceeded, 30));
  ASSERT_TRUE(copy.Commit(b).ok());
  absl::Status diff = CompareStores(*store_, copy);
  EXPECT_EQ(diff.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(diff.message(), ::testing::HasSubstr("events"));
}

// One PostgreSQL server for the whole suite, started when a test first needs it and stopped
// when the suite ends; each test gets a database of its own, named after its directory so
// that reopening finds the same one.
class PostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    delete server;
    server = nullptr;
  }
  static inline testing::PostgresServer* server = nullptr;
};
[[maybe_unused]] const ::testing::Environment* const kPostgresEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

testing::PostgresServer* Postgres() {
  if (PostgresEnvironment::server == nullptr) {
    auto s = testing::PostgresServer::Start();
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) PostgresEnvironment::server = std::move(*s).release();
  }
  return PostgresEnvironment::server;
}

std::unique_ptr<Store> OpenPostgres(const std::string& dir) {
  static std::map<std::string, std::string> databases;
  testing::PostgresServer* server = Postgres();
  if (server == nullptr) return nullptr;
  auto [it, fresh] = databases.try_emplace(dir, "conf" + std::to_string(databases.size()));
  if (fresh) {
    absl::Status created = server->CreateDatabase(it->second);
    EXPECT_TRUE(created.ok()) << created;
  }
  auto s = PostgresStore::Open(server->url_for(it->second));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::unique_ptr<Store>(std::move(*s)) : nullptr;
}

std::vector<Backend> Backends() {
  return {
      {"postgres", true, OpenPostgres},
      {"memory", false, [](const std::string&) { return std::make_unique<MemoryStore>(); }},
      {"sqlite", true,
       [](const std::string& dir) -> std::unique_ptr<Store> {
         auto s = SqliteStore::Open(dir);
         EXPECT_TRUE(s.ok()) << s.status();
         return s.ok() ? std::unique_ptr<Store>(std::move(*s)) : nullptr;
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

TEST(SqliteStoreFaults, FailureInTheMiddleOfATransactionRollsBackEverything) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("pl-sqlite-mid-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok());
  records::WriteBatch b;
  for (uint32_t i = 0; i < 10; ++i) b.put_tasks.push_back(Task(1, i, TaskState::kRunning));
  b.next_job_id = 5;
  (*store)->FailAfterWritesForTesting(6);  // six rows written, then the disk "fails"
  EXPECT_EQ((*store)->Commit(b).code(), absl::StatusCode::kUnavailable);
  auto c = (*store)->Load();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->tasks.empty());
  EXPECT_EQ(c->next_job_id, 1u);
  EXPECT_TRUE((*store)->Commit(b).ok());
  EXPECT_EQ((*store)->Load()->tasks.size(), 10u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::store
