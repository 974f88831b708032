#include "bench/fake_agent.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace paceline::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

RunId MakeRun(uint64_t job, uint32_t instance, uint32_t run = 1) {
  return RunId{TaskId{JobId(job), instance}, run};
}

v1::MasterMessage Registered(absl::Duration interval = absl::Seconds(2)) {
  v1::MasterMessage m;
  m.mutable_registered()->set_heartbeat_interval_ms(absl::ToInt64Milliseconds(interval));
  return m;
}

v1::MasterMessage Launch(const RunId& r, std::vector<std::pair<std::string, uint32_t>> ports = {}) {
  v1::MasterMessage m;
  v1::RunRef* ref = m.mutable_launch()->mutable_run();
  ref->set_job_id(r.task.job.value());
  ref->set_instance(r.task.instance);
  ref->set_run(r.run);
  m.mutable_launch()->mutable_task()->set_command("true");
  for (const auto& [name, port] : ports) (*m.mutable_launch()->mutable_ports())[name] = port;
  return m;
}

v1::MasterMessage Kill(const RunId& r) {
  v1::MasterMessage m;
  v1::RunRef* ref = m.mutable_kill()->mutable_run();
  ref->set_job_id(r.task.job.value());
  ref->set_instance(r.task.instance);
  ref->set_run(r.run);
  m.mutable_kill()->set_grace_ms(5000);
  return m;
}

v1::MasterMessage Ack(uint64_t seq) {
  v1::MasterMessage m;
  m.mutable_ack()->set_seq(seq);
  return m;
}

RunId RunOf(const v1::TaskStatusUpdate& u) {
  return MakeRun(u.run().job_id(), u.run().instance(), u.run().run());
}

// Records every observer call, as "EVENT job/instance/run STATE".
class RecordingObserver : public FleetObserver {
 public:
  void OnLaunched(const RunId& run, absl::Time at) override {
    events.push_back("launched " + run.ToString());
    times.push_back(at);
  }
  void OnSent(const RunId& run, FakeRunState state, absl::Time at) override {
    events.push_back(absl::StrCat("sent ", run.ToString(), " ", FakeRunStateName(state)));
    times.push_back(at);
  }
  void OnAcked(const RunId& run, FakeRunState state, absl::Time at, absl::Time acked) override {
    events.push_back(absl::StrCat("acked ", run.ToString(), " ", FakeRunStateName(state)));
    times.push_back(at);
    times.push_back(acked);
  }
  std::vector<std::string> events;
  std::vector<absl::Time> times;
};

class FakeAgentTest : public ::testing::Test {
 protected:
  FakeAgent Make(absl::Duration duration = absl::InfiniteDuration(),
                 absl::Duration resend_after = absl::Seconds(10)) {
    auto options = std::make_shared<FakeAgentOptions>();
    options->task_duration = duration;
    options->resend_after = resend_after;
    options->observer = &observer_;
    FakeHostSpec spec;
    spec.name = "fake-7";
    spec.capacity.set_cpu_milli(4000);
    spec.capacity.set_memory_bytes(int64_t{8} << 30);
    spec.capacity.set_gpu_milli(2000);
    spec.labels = {{"zone", "z1"}, {"rack", "r3"}};
    spec.port_first = 40000;
    spec.port_last = 40099;
    return FakeAgent(std::move(spec), std::move(options));
  }
  // A registered agent, at kT0.
  FakeAgent Connected(absl::Duration duration = absl::InfiniteDuration(),
                      absl::Duration resend_after = absl::Seconds(10)) {
    FakeAgent a = Make(duration, resend_after);
    a.Register();
    EXPECT_THAT(a.OnMessage(Registered(), kT0), IsEmpty());
    return a;
  }

  RecordingObserver observer_;
};

TEST_F(FakeAgentTest, RegisterCarriesTheHost) {
  FakeAgent a = Make();
  v1::AgentMessage m = a.Register();
  ASSERT_TRUE(m.has_register_());
  const v1::AgentRegister& r = m.register_();
  EXPECT_EQ(r.host(), "fake-7");
  EXPECT_EQ(r.capacity().cpu_milli(), 4000);
  EXPECT_EQ(r.capacity().memory_bytes(), int64_t{8} << 30);
  EXPECT_EQ(r.capacity().gpu_milli(), 0) << "GPUs are offered as devices";
  EXPECT_THAT(r.gpu_models(), ElementsAre("emulated", "emulated"));
  std::map<std::string, std::string> labels(r.labels().begin(), r.labels().end());
  EXPECT_THAT(labels, ElementsAre(Pair("rack", "r3"), Pair("zone", "z1")));
  ASSERT_EQ(r.ports_size(), 1);
  EXPECT_EQ(r.ports(0).first(), 40000u);
  EXPECT_EQ(r.ports(0).last(), 40099u);
  EXPECT_THAT(r.running(), IsEmpty());
  EXPECT_EQ(r.isolation(), "none (emulated)");
  EXPECT_TRUE(r.accepts_batches());
  EXPECT_FALSE(a.registered());
}

TEST_F(FakeAgentTest, NothingIsDueBeforeRegistered) {
  FakeAgent a = Make();
  a.Register();
  EXPECT_EQ(a.NextDue(), absl::InfiniteFuture());
  EXPECT_THAT(a.Due(kT0 + absl::Hours(1)), IsEmpty());
}

TEST_F(FakeAgentTest, HeartbeatsAtTheIntervalRegisteredAsks) {
  FakeAgent a = Make();
  a.Register();
  EXPECT_THAT(a.OnMessage(Registered(absl::Milliseconds(500)), kT0), IsEmpty());
  EXPECT_TRUE(a.registered());
  EXPECT_EQ(a.NextDue(), kT0 + absl::Milliseconds(500));
  EXPECT_THAT(a.Due(kT0 + absl::Milliseconds(499)), IsEmpty());
  std::vector<v1::AgentMessage> beat = a.Due(kT0 + absl::Milliseconds(500));
  ASSERT_THAT(beat, SizeIs(1));
  ASSERT_TRUE(beat[0].has_heartbeat());
  EXPECT_EQ(beat[0].heartbeat().at_unix_ms(), absl::ToUnixMillis(kT0 + absl::Milliseconds(500)));
  EXPECT_EQ(a.NextDue(), kT0 + absl::Milliseconds(1000));
  EXPECT_THAT(a.Due(kT0 + absl::Milliseconds(999)), IsEmpty());
  // A late driver gets one heartbeat, not a burst, and the cadence restarts from then.
  EXPECT_THAT(a.Due(kT0 + absl::Milliseconds(2600)), SizeIs(1));
  EXPECT_EQ(a.NextDue(), kT0 + absl::Milliseconds(3100));
}

TEST_F(FakeAgentTest, LaunchReportsRunningAtOnceWithIncreasingSeq) {
  FakeAgent a = Connected();
  const absl::Time t1 = kT0 + absl::Milliseconds(10);
  std::vector<v1::AgentMessage> first = a.OnMessage(Launch(MakeRun(3, 0)), t1);
  std::vector<v1::AgentMessage> second = a.OnMessage(Launch(MakeRun(3, 1)), t1);
  ASSERT_THAT(first, SizeIs(1));
  ASSERT_THAT(second, SizeIs(1));
  const v1::TaskStatusUpdate& u1 = first[0].status();
  const v1::TaskStatusUpdate& u2 = second[0].status();
  EXPECT_EQ(u1.state(), v1::Task::RUNNING);
  EXPECT_EQ(RunOf(u1), MakeRun(3, 0));
  EXPECT_EQ(u1.at_unix_ms(), absl::ToUnixMillis(t1));
  EXPECT_EQ(u2.state(), v1::Task::RUNNING);
  EXPECT_EQ(RunOf(u2), MakeRun(3, 1));
  EXPECT_EQ(u1.seq(), 1u);
  EXPECT_EQ(u2.seq(), 2u);
  EXPECT_EQ(a.live_runs(), 2u);
  EXPECT_EQ(a.unacknowledged(), 2u);
  EXPECT_THAT(observer_.events, ElementsAre("launched 3/0/1", "sent 3/0/1 RUNNING",
                                            "launched 3/1/1", "sent 3/1/1 RUNNING"));
  // A second launch of a run the host has changes nothing.
  EXPECT_THAT(a.OnMessage(Launch(MakeRun(3, 0)), t1), IsEmpty());
  EXPECT_EQ(a.live_runs(), 2u);
}

TEST_F(FakeAgentTest, ABatchIsHandledAsItsMessagesInOrder) {
  FakeAgent a = Connected();
  v1::MasterMessage batch;
  *batch.mutable_batch()->add_messages() = Launch(MakeRun(4, 0));
  *batch.mutable_batch()->add_messages() = Launch(MakeRun(4, 1));
  *batch.mutable_batch()->add_messages() = Ack(1);
  std::vector<v1::AgentMessage> out = a.OnMessage(batch, kT0);
  ASSERT_THAT(out, SizeIs(2));
  EXPECT_EQ(RunOf(out[0].status()), MakeRun(4, 0));
  EXPECT_EQ(RunOf(out[1].status()), MakeRun(4, 1));
  EXPECT_EQ(a.live_runs(), 2u);
  EXPECT_EQ(a.unacknowledged(), 1u) << "the batch's ack came after both launches";
}

TEST_F(FakeAgentTest, AckForgetsEverythingUpToItsSeq) {
  FakeAgent a = Connected();
  for (uint32_t i = 0; i < 3; ++i) a.OnMessage(Launch(MakeRun(1, i)), kT0);
  observer_.events.clear();
  observer_.times.clear();
  const absl::Time acked = kT0 + absl::Milliseconds(40);
  EXPECT_THAT(a.OnMessage(Ack(2), acked), IsEmpty());
  EXPECT_EQ(a.unacknowledged(), 1u);
  EXPECT_THAT(observer_.events, ElementsAre("acked 1/0/1 RUNNING", "acked 1/1/1 RUNNING"));
  EXPECT_THAT(observer_.times, ElementsAre(kT0, acked, kT0, acked));
  a.OnMessage(Ack(2), acked);  // a repeated ack acknowledges nothing new
  EXPECT_EQ(a.unacknowledged(), 1u);
  a.OnMessage(Ack(3), acked);
  EXPECT_EQ(a.unacknowledged(), 0u);
  EXPECT_EQ(a.live_runs(), 3u) << "acknowledged runs keep running";
}

TEST_F(FakeAgentTest, UnacknowledgedUpdatesAreSentAgainAfterTheTimeout) {
  FakeAgent a = Connected(absl::InfiniteDuration(), absl::Seconds(3));
  a.OnMessage(Launch(MakeRun(1, 0)), kT0);
  a.OnMessage(Launch(MakeRun(1, 1)), kT0 + absl::Seconds(1));
  a.OnMessage(Ack(0), kT0);
  auto statuses = [](const std::vector<v1::AgentMessage>& msgs) {
    std::vector<uint64_t> seqs;
    for (const v1::AgentMessage& m : msgs) {
      if (m.has_status()) seqs.push_back(m.status().seq());
    }
    return seqs;
  };
  EXPECT_THAT(statuses(a.Due(kT0 + absl::Milliseconds(2999))), IsEmpty());
  EXPECT_THAT(statuses(a.Due(kT0 + absl::Seconds(3))), ElementsAre(1u));
  EXPECT_THAT(statuses(a.Due(kT0 + absl::Seconds(4))), ElementsAre(2u));
  a.OnMessage(Ack(1), kT0 + absl::Seconds(5));
  EXPECT_THAT(statuses(a.Due(kT0 + absl::Seconds(6))), IsEmpty()) << "acked: not sent again";
  EXPECT_THAT(statuses(a.Due(kT0 + absl::Seconds(7))), ElementsAre(2u));
  EXPECT_THAT(observer_.events, ::testing::Contains("sent 1/0/1 RUNNING").Times(1))
      << "resends are not reported as sends";
}

TEST_F(FakeAgentTest, ARunSucceedsAfterItsDuration) {
  FakeAgent a = Connected(absl::Seconds(1));
  a.OnMessage(Launch(MakeRun(5, 2)), kT0);
  EXPECT_EQ(a.NextDue(), kT0 + absl::Seconds(1));
  EXPECT_THAT(a.Due(kT0 + absl::Milliseconds(999)), IsEmpty());
  std::vector<v1::AgentMessage> done = a.Due(kT0 + absl::Seconds(1));
  ASSERT_THAT(done, SizeIs(1));
  const v1::TaskStatusUpdate& u = done[0].status();
  EXPECT_EQ(u.state(), v1::Task::SUCCEEDED);
  EXPECT_EQ(u.exit_code(), 0);
  EXPECT_EQ(u.seq(), 2u);
  EXPECT_EQ(RunOf(u), MakeRun(5, 2));
  EXPECT_EQ(a.live_runs(), 0u);
  a.OnMessage(Ack(2), kT0 + absl::Seconds(1));
  EXPECT_EQ(a.unacknowledged(), 0u);
  // Only heartbeats from now on.
  for (const v1::AgentMessage& m : a.Due(kT0 + absl::Seconds(30))) EXPECT_TRUE(m.has_heartbeat());
}

TEST_F(FakeAgentTest, KillReportsKilledAndTheRunNeverFinishes) {
  FakeAgent a = Connected(absl::Seconds(1));
  a.OnMessage(Launch(MakeRun(5, 0)), kT0);
  std::vector<v1::AgentMessage> killed =
      a.OnMessage(Kill(MakeRun(5, 0)), kT0 + absl::Milliseconds(5));
  ASSERT_THAT(killed, SizeIs(1));
  EXPECT_EQ(killed[0].status().state(), v1::Task::KILLED);
  EXPECT_EQ(killed[0].status().signal(), 15);
  EXPECT_EQ(killed[0].status().seq(), 2u);
  EXPECT_EQ(a.live_runs(), 0u);
  EXPECT_THAT(a.OnMessage(Kill(MakeRun(5, 0)), kT0), IsEmpty()) << "over already";
  EXPECT_THAT(a.OnMessage(Kill(MakeRun(9, 9)), kT0), IsEmpty()) << "never had it";
  a.OnMessage(Ack(2), kT0);
  for (const v1::AgentMessage& m : a.Due(kT0 + absl::Seconds(5))) {
    EXPECT_FALSE(m.has_status()) << m.DebugString();
  }
}

TEST_F(FakeAgentTest, LogRequestsAreAnsweredWithAnError) {
  FakeAgent a = Connected();
  v1::MasterMessage m;
  m.mutable_logs()->set_request_id(77);
  std::vector<v1::AgentMessage> out = a.OnMessage(m, kT0);
  ASSERT_THAT(out, SizeIs(1));
  ASSERT_TRUE(out[0].has_logs());
  EXPECT_EQ(out[0].logs().request_id(), 77u);
  EXPECT_EQ(out[0].logs().error(), "emulated host has no logs");
}

TEST_F(FakeAgentTest, AReconnectionListsTheRunsAndSendsUnacknowledgedUpdatesAgain) {
  FakeAgent a = Connected(absl::Seconds(1));
  a.OnMessage(Launch(MakeRun(2, 0)), kT0);
  a.OnMessage(Launch(MakeRun(2, 1), {{"http", 40007}}), kT0 + absl::Seconds(2));
  a.OnMessage(Ack(2), kT0 + absl::Seconds(2));
  a.Disconnected();
  // 2/0 finishes while disconnected: queued, not sent.
  EXPECT_THAT(a.Due(kT0 + absl::Milliseconds(1500)), IsEmpty());
  EXPECT_EQ(a.unacknowledged(), 1u);

  v1::AgentMessage reg = a.Register();
  std::map<std::string, std::map<std::string, uint32_t>> running;
  for (const v1::RunningTask& t : reg.register_().running()) {
    running[MakeRun(t.run().job_id(), t.run().instance(), t.run().run()).ToString()] =
        std::map<std::string, uint32_t>(t.ports().begin(), t.ports().end());
  }
  EXPECT_THAT(running, ElementsAre(Pair("2/0/1", IsEmpty()),
                                   Pair("2/1/1", ElementsAre(Pair("http", 40007)))))
      << "2/0 ended but its SUCCEEDED is not acknowledged: still listed, holding nothing";
  std::vector<v1::AgentMessage> resent = a.OnMessage(Registered(), kT0 + absl::Seconds(3));
  ASSERT_THAT(resent, SizeIs(1));
  EXPECT_EQ(resent[0].status().state(), v1::Task::SUCCEEDED);
  EXPECT_EQ(resent[0].status().seq(), 3u);
  a.OnMessage(Ack(3), kT0 + absl::Seconds(3));
  EXPECT_THAT(a.Register().register_().running(), SizeIs(1));
}

}  // namespace
}  // namespace paceline::bench
