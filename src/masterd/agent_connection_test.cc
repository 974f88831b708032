// AgentConnection reads batches (wire/stream_batch.h) as their messages in order, checks all
// of a batch before applying any of it, and says in `registered` that it reads them.

#include "masterd/agent_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/memory_store.h"

namespace paceline::masterd {
namespace {

using ::testing::HasSubstr;

// An AgentLink that keeps what the master sends.
class RecordingLink final : public api::AgentLink {
 public:
  const std::string& host() const override { return host_; }
  const std::string& address() const override { return address_; }
  void Send(v1::MasterMessage msg) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back(std::move(msg));
  }
  void Close() override { closed_ = true; }
  bool closed() const override { return closed_; }
  void Abort() override {}

  std::vector<v1::MasterMessage> sent() const {
    absl::MutexLock lock(&mu_);
    return sent_;
  }
  // The acknowledged seqs, in the order sent.
  std::vector<uint64_t> acks() const {
    std::vector<uint64_t> seqs;
    for (const v1::MasterMessage& m : sent()) {
      if (m.has_ack()) seqs.push_back(m.ack().seq());
    }
    return seqs;
  }

 private:
  const std::string host_ = "h1";
  const std::string address_ = "127.0.0.1";
  mutable absl::Mutex mu_;
  std::vector<v1::MasterMessage> sent_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> closed_ = false;
};

v1::AgentMessage Register() {
  v1::AgentMessage m;
  m.mutable_register_()->set_host("h1");
  m.mutable_register_()->mutable_capacity()->set_cpu_milli(4000);
  m.mutable_register_()->mutable_capacity()->set_memory_bytes(int64_t{8} << 30);
  m.mutable_register_()->set_accepts_batches(true);
  return m;
}

// A RUNNING update of a run the master never launched (it answers with a kill; the update is
// acknowledged all the same once that is durable).
v1::AgentMessage Status(uint64_t seq, v1::Task::State state = v1::Task::RUNNING) {
  v1::AgentMessage m;
  m.mutable_status()->set_seq(seq);
  m.mutable_status()->mutable_run()->set_job_id(99);
  m.mutable_status()->mutable_run()->set_instance(static_cast<uint32_t>(seq));
  m.mutable_status()->mutable_run()->set_run(1);
  m.mutable_status()->set_state(state);
  return m;
}

v1::AgentMessage Batch(std::vector<v1::AgentMessage> msgs) {
  v1::AgentMessage b;
  for (v1::AgentMessage& m : msgs) *b.mutable_batch()->add_messages() = std::move(m);
  return b;
}

class AgentConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.Start().ok());
    absl::StatusOr<std::unique_ptr<AgentConnection>> conn =
        AgentConnection::Open(&cluster_, link_, Register(), absl::Seconds(10));
    ASSERT_TRUE(conn.ok()) << conn.status();
    conn_ = *std::move(conn);
  }
  void TearDown() override {
    conn_.reset();
    cluster_.Stop();
  }

  // Waits until the link was sent an acknowledgement.
  bool Acked() {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (link_->acks().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
    return !link_->acks().empty();
  }

  store::MemoryStore memory_;
  Cluster cluster_{scheduler::CoreConfig{}, &memory_, ClusterOptions{absl::Milliseconds(5)}};
  std::shared_ptr<RecordingLink> link_ = std::make_shared<RecordingLink>();
  std::unique_ptr<AgentConnection> conn_;
};

TEST_F(AgentConnectionTest, RegisteredSaysTheMasterReadsBatches) {
  std::vector<v1::MasterMessage> sent = link_->sent();
  ASSERT_FALSE(sent.empty());
  ASSERT_TRUE(sent[0].has_registered());
  EXPECT_TRUE(sent[0].registered().accepts_batches());
}

TEST_F(AgentConnectionTest, ABatchIsItsMessagesInOrderWithOneAcknowledgement) {
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_at_unix_ms(1);
  ASSERT_TRUE(conn_->OnMessage(Batch({heartbeat, Status(1), Status(2), Status(3)})).ok());
  ASSERT_TRUE(Acked());
  EXPECT_EQ(link_->acks(), std::vector<uint64_t>{3}) << "cumulative: one ack of the last";
}

TEST_F(AgentConnectionTest, ABadBatchIsRefusedByNameAndNothingOfItIsApplied) {
  // A nested batch, after a valid update.
  absl::Status nested = conn_->OnMessage(Batch({Status(7), Batch({Status(8)})}));
  EXPECT_EQ(nested.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(nested.message(), HasSubstr("batch.messages[1]"));
  // A register in a batch.
  absl::Status reg = conn_->OnMessage(Batch({Status(7), Register()}));
  EXPECT_EQ(reg.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(reg.message(), HasSubstr("register"));
  // An update whose state an agent never reports, after a valid one.
  absl::Status pending = conn_->OnMessage(Batch({Status(7), Status(9, v1::Task::PENDING)}));
  EXPECT_EQ(pending.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pending.message(), HasSubstr("batch.messages[1].status.state"));

  // Update 7 of the refused batches was never applied: the first ack is of the good batch.
  ASSERT_TRUE(conn_->OnMessage(Batch({Status(1), Status(2)})).ok());
  ASSERT_TRUE(Acked());
  EXPECT_EQ(link_->acks(), std::vector<uint64_t>{2});
}

}  // namespace
}  // namespace paceline::masterd
