#include "records/batch_coalescer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::records {
namespace {

TaskRecord Task(uint64_t job, uint32_t instance, TaskState state) {
  TaskRecord t;
  t.id = TaskId{JobId(job), instance};
  t.state = state;
  return t;
}

TaskEvent Event(uint64_t job, uint32_t instance, TaskState state) {
  return TaskEvent{RunId{TaskId{JobId(job), instance}, 1}, absl::UnixEpoch(), state, "", "", ""};
}

TEST(BatchCoalescer, MergesPutsOncePerKeyWithTheLastValueAndKeepsEveryEventInOrder) {
  BatchCoalescer c;
  WriteBatch a;
  a.put_tasks = {Task(1, 0, TaskState::kLaunching), Task(1, 1, TaskState::kLaunching)};
  a.events = {Event(1, 0, TaskState::kLaunching), Event(1, 1, TaskState::kLaunching)};
  JobRecord job;
  job.id = JobId(2);
  a.put_jobs = {job};
  a.next_job_id = 3;
  WriteBatch b;
  b.put_tasks = {Task(1, 1, TaskState::kRunning), Task(2, 0, TaskState::kLaunching)};
  b.events = {Event(1, 1, TaskState::kRunning)};
  job.version = 2;
  b.put_jobs = {job};
  b.put_hosts = {HostRecord{"h1", HostMaintenance::kUp, {}, {}}};
  b.next_job_id = 4;
  c.Add(std::move(a));
  c.Add(std::move(b));
  EXPECT_EQ(c.batches(), 2u);
  WriteBatch merged = c.Take();
  ASSERT_EQ(merged.put_tasks.size(), 3u);
  EXPECT_EQ(merged.put_tasks[0], Task(1, 0, TaskState::kLaunching));
  EXPECT_EQ(merged.put_tasks[1], Task(1, 1, TaskState::kRunning)) << "the last value, in place";
  EXPECT_EQ(merged.put_tasks[2], Task(2, 0, TaskState::kLaunching));
  ASSERT_EQ(merged.put_jobs.size(), 1u);
  EXPECT_EQ(merged.put_jobs[0].version, 2u);
  EXPECT_THAT(merged.events, ::testing::ElementsAre(Event(1, 0, TaskState::kLaunching),
                                                    Event(1, 1, TaskState::kLaunching),
                                                    Event(1, 1, TaskState::kRunning)));
  EXPECT_EQ(merged.put_hosts.size(), 1u);
  EXPECT_EQ(merged.next_job_id, 4u);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.batches(), 0u);
  // Empty again: a task put before is new again.
  WriteBatch d;
  d.put_tasks = {Task(1, 1, TaskState::kSucceeded)};
  c.Add(std::move(d));
  EXPECT_EQ(c.Take().put_tasks.size(), 1u);
}

TEST(BatchCoalescer, BatchesThatDeleteOrTouchAccessGoAlone) {
  EXPECT_TRUE(BatchCoalescer::Mergeable(WriteBatch()));
  auto with = [](auto set) {
    WriteBatch b;
    set(b);
    return BatchCoalescer::Mergeable(b);
  };
  EXPECT_FALSE(with([](WriteBatch& b) { b.delete_tasks = {TaskId{JobId(1), 0}}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.delete_jobs = {JobId(1)}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.delete_pools = {"/a"}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.put_pools = {PoolRecord{}}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.put_tokens = {TokenRecord{}}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.put_secrets = {SecretRecord{}}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.delete_secrets = {"/a/x"}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.audit = {AuditRecord{}}; }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.prune_audit_before = absl::UnixEpoch(); }));
  EXPECT_FALSE(with([](WriteBatch& b) { b.cluster_id = "x"; }));
  EXPECT_TRUE(with([](WriteBatch& b) { b.put_tasks = {TaskRecord{}}; }));
}

}  // namespace
}  // namespace paceline::records
