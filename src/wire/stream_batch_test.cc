#include "wire/stream_batch.h"

#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace paceline::wire {
namespace {

v1::MasterMessage Launch(uint64_t job, size_t command_bytes = 8) {
  v1::MasterMessage m;
  m.mutable_launch()->mutable_run()->set_job_id(job);
  m.mutable_launch()->mutable_task()->set_command(std::string(command_bytes, 'x'));
  return m;
}

std::vector<uint64_t> Jobs(const v1::MasterMessage& msg) {
  std::vector<uint64_t> jobs;
  ForEachMessage(msg,
                 [&](const v1::MasterMessage& m) { jobs.push_back(m.launch().run().job_id()); });
  return jobs;
}

TEST(StreamBatch, OneQueuedMessageGoesAlone) {
  std::deque<v1::MasterMessage> q{Launch(1)};
  PackFront(q);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_TRUE(q.front().has_launch());
  EXPECT_EQ(Jobs(q.front()), std::vector<uint64_t>{1});
}

TEST(StreamBatch, QueuedMessagesBecomeOneBatchInOrder) {
  std::deque<v1::MasterMessage> q;
  for (uint64_t j = 1; j <= 5; ++j) q.push_back(Launch(j));
  PackFront(q);
  ASSERT_EQ(q.size(), 1u);
  ASSERT_TRUE(q.front().has_batch());
  EXPECT_EQ(Jobs(q.front()), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(CheckBatch(q.front()).ok());
}

TEST(StreamBatch, ABatchStopsAtItsCountAndItsBytes) {
  std::deque<v1::MasterMessage> q;
  for (uint64_t j = 0; j < kMaxBatchMessages + 10; ++j) q.push_back(Launch(j));
  PackFront(q);
  ASSERT_EQ(q.size(), 11u);
  EXPECT_EQ(q.front().batch().messages_size(), static_cast<int>(kMaxBatchMessages));
  EXPECT_EQ(q[1].launch().run().job_id(), kMaxBatchMessages);  // the rest waits, in order

  // Three messages of 400 KiB: two fit in 1 MiB, the third waits.
  std::deque<v1::MasterMessage> big{Launch(1, 400 << 10), Launch(2, 400 << 10),
                                    Launch(3, 400 << 10)};
  PackFront(big);
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(Jobs(big.front()), (std::vector<uint64_t>{1, 2}));
  // A first message over the limit still goes (alone): the limit never blocks the queue.
  std::deque<v1::MasterMessage> huge{Launch(1, 2 << 20), Launch(2)};
  PackFront(huge);
  ASSERT_EQ(huge.size(), 2u);
  EXPECT_TRUE(huge.front().has_launch());
}

TEST(StreamBatch, ANestedBatchOrAnAgentsRegisterInABatchIsRefusedByName) {
  v1::MasterMessage m;
  *m.mutable_batch()->add_messages() = Launch(1);
  m.mutable_batch()->add_messages()->mutable_batch();
  absl::Status s = CheckBatch(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("batch.messages[1]"), std::string::npos) << s;

  // `registered` may come in a batch, after launches queued before it.
  v1::MasterMessage hello;
  *hello.mutable_batch()->add_messages() = Launch(1);
  hello.mutable_batch()->add_messages()->mutable_registered()->set_accepts_batches(true);
  EXPECT_TRUE(CheckBatch(hello).ok());

  v1::AgentMessage a;
  a.mutable_batch()->add_messages()->mutable_heartbeat();
  EXPECT_TRUE(CheckBatch(a).ok());
  a.mutable_batch()->add_messages()->mutable_register_()->set_host("h");
  s = CheckBatch(a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("batch.messages[1]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("register"), std::string::npos) << s;
}

}  // namespace
}  // namespace paceline::wire
