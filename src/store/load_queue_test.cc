#include "store/load_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace paceline::store {
namespace {

std::vector<records::TaskRecord> Batch(uint64_t job, uint32_t n) {
  std::vector<records::TaskRecord> b(n);
  for (uint32_t i = 0; i < n; ++i) b[i].id = TaskId{JobId(job), i};
  return b;
}

TEST(LoadQueue, TheReaderGetsTheHeadThenEveryBatchThenTheLoadsResult) {
  LoadQueue q(2);
  std::thread loader([&] {
    records::StoreContents head;
    head.next_job_id = 42;
    q.Head(std::move(head));
    for (uint64_t j = 1; j <= 10; ++j) EXPECT_TRUE(q.Tasks(Batch(j, 3)));  // waits when 2 ahead
    q.Close(absl::OkStatus());
  });
  std::optional<records::StoreContents> head = q.WaitHead();
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->next_job_id, 42u);
  uint64_t next = 1;
  while (std::optional<std::vector<records::TaskRecord>> b = q.Next()) {
    ASSERT_EQ(b->size(), 3u);
    EXPECT_EQ(b->front().id.job, JobId(next++));
  }
  EXPECT_EQ(next, 11u);
  EXPECT_TRUE(q.Wait().ok());
  loader.join();
}

TEST(LoadQueue, ARecycledBatchComesBackEmptyWithItsRoomAsTheLoadersSpare) {
  LoadQueue q(1);
  EXPECT_TRUE(q.TakeSpare().empty());  // none yet
  ASSERT_TRUE(q.Tasks(Batch(1, 100)));
  std::optional<std::vector<records::TaskRecord>> b = q.Next();
  ASSERT_TRUE(b.has_value());
  const records::TaskRecord* memory = b->data();
  q.Recycle(*std::move(b));
  std::vector<records::TaskRecord> spare = q.TakeSpare();
  EXPECT_TRUE(spare.empty());
  EXPECT_GE(spare.capacity(), 100u);
  EXPECT_EQ(spare.data(), memory);
  EXPECT_EQ(q.TakeSpare().capacity(), 0u);  // one given, one taken
  for (int i = 0; i < 5; ++i) q.Recycle(Batch(2, 10));
  int kept = 0;
  while (q.TakeSpare().capacity() > 0) ++kept;
  EXPECT_EQ(kept, 3);  // capacity + 2
  q.Recycle(Batch(3, 10));
  q.Cancel();
  EXPECT_EQ(q.TakeSpare().capacity(), 0u);  // a cancelled queue keeps nothing
  q.Recycle(Batch(4, 10));
  EXPECT_EQ(q.TakeSpare().capacity(), 0u);
  q.Close(absl::OkStatus());
}

TEST(LoadQueue, ALoadThatFailsBeforeItsHeadGivesNoHeadAndItsError) {
  LoadQueue q(2);
  std::thread loader([&] { q.Close(absl::DataLossError("bad row")); });
  EXPECT_FALSE(q.WaitHead().has_value());
  EXPECT_EQ(q.Wait().code(), absl::StatusCode::kDataLoss);
  loader.join();
}

TEST(LoadQueue, ALoadThatFailsMidwayEndsTheBatchesWithItsError) {
  LoadQueue q(4);
  q.Head(records::StoreContents{});
  EXPECT_TRUE(q.Tasks(Batch(1, 1)));
  q.Close(absl::UnavailableError("disk"));
  ASSERT_TRUE(q.WaitHead().has_value());
  EXPECT_TRUE(q.Next().has_value());  // what was read before the failure is still handed over
  EXPECT_FALSE(q.Next().has_value());
  EXPECT_EQ(q.Wait().code(), absl::StatusCode::kUnavailable);
}

TEST(LoadQueue, CancellingReleasesALoaderWaitingForRoom) {
  LoadQueue q(1);
  q.Head(records::StoreContents{});
  EXPECT_TRUE(q.Tasks(Batch(1, 1)));
  bool accepted = true;
  std::thread loader([&] {
    accepted = q.Tasks(Batch(2, 1));  // the queue is full: waits, until the reader cancels
    q.Close(absl::CancelledError("abandoned"));
  });
  ASSERT_TRUE(q.WaitHead().has_value());
  q.Cancel();
  EXPECT_EQ(q.Wait().code(), absl::StatusCode::kCancelled);
  loader.join();
  EXPECT_FALSE(accepted);
  EXPECT_FALSE(q.Next().has_value());
}

}  // namespace
}  // namespace paceline::store
