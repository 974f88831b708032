#include "agent/base/agent_json.h"

#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(AgentJsonTest, RunContextRoundTrips) {
  RunContext c;
  c.request = testing::Req(12, 3, 4, "echo hi");
  c.request.spec.resources = Resources::Of(1500, 1 << 30, 0, 500);
  c.request.spec.ports = {"http"};
  c.request.spec.env = {{"A", "1"}};
  c.request.spec.user = "svc";
  c.request.spec.volume = VolumeSpec{1 << 20};
  HealthSpec h;
  h.check = HttpCheck{"http", "/healthz"};
  h.failures = 2;
  c.request.spec.health = h;
  HealthSpec ready;
  ready.check = CommandCheck{"test -f ready"};
  ready.interval = absl::Milliseconds(200);
  ready.failures = 1;
  c.request.spec.readiness = ready;
  c.request.ports = {{"http", 31000}};
  c.request.gpu_devices = {1};
  c.request.peers = std::map<uint32_t, GangPeer>{{0, {"h", {{"http", 1}}, "10.0.0.1", "ps"}},
                                                 {1, {"h2", {{"http", 2}}, "", ""}}};
  c.request.rendezvous = GangRendezvousRequest{Rendezvous::kTensorFlow, "rdv", 2};
  c.request.role = "ps";
  c.key = "12_3_4";
  c.boot_id = "b";
  c.user = TaskUser{"nobody", 65534, 65534, {65534}, "/nonexistent"};
  c.sandbox = "/s";
  c.run_state = "/r";
  c.ports = {{"http", 31000}};
  c.gpus = {1};
  c.cgroup = "12_3_4";
  c.cgroup_procs = {"/sys/fs/cgroup/x/cgroup.procs"};
  c.env = {{"PACELINE_SANDBOX", "/s"}};
  c.final_env = {"A=1"};
  c.wrapper_pid = 10;
  c.wrapper_start = 11;
  c.task_pid = 12;
  c.task_start = 13;
  c.started = absl::FromUnixSeconds(1000);
  c.kill_requested = true;
  c.kill_term_at = absl::FromUnixSeconds(1990);
  c.kill_deadline = absl::FromUnixSeconds(2000);
  absl::StatusOr<RunContext> back = RunContextFromJson(RunContextToJson(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, c);

  RunContext empty;
  EXPECT_EQ(RunContextFromJson(RunContextToJson(empty)).value(), empty);
  // A checkpoint with a rendezvous kind this agent does not know is refused, not guessed.
  std::string unknown = RunContextToJson(c);
  unknown.replace(unknown.find("\"tensorflow\""), 12, "\"jax\"");
  EXPECT_EQ(RunContextFromJson(unknown).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunContextFromJson("{").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunContextFromJson("{}").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AgentJsonTest, ACheckpointKeepsASecretsNameAndNeverItsValue) {
  RunContext c;
  c.request = testing::Req(12, 3, 4, "echo hi");
  c.request.spec.secrets = {{"db-password", "DB_PASSWORD", ""}, {"tls-key", "", "tls.key"}};
  c.request.secret_values = {{"db-password", "hunter2-value"}, {"tls-key", "key-value"}};
  c.secrets_dir = "/s/secrets";
  c.secrets_tmpfs = true;
  c.secret_env = {"DB_PASSWORD=hunter2-value"};
  const std::string json = RunContextToJson(c);
  EXPECT_EQ(json.find("hunter2-value"), std::string::npos) << json;
  EXPECT_EQ(json.find("key-value"), std::string::npos) << json;
  absl::StatusOr<RunContext> back = RunContextFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->request.spec.secrets, c.request.spec.secrets);
  EXPECT_EQ(back->secrets_dir, "/s/secrets");
  EXPECT_TRUE(back->secrets_tmpfs);
  EXPECT_TRUE(back->request.secret_values.empty());
  EXPECT_TRUE(back->secret_env.empty());
}

TEST(AgentJsonTest, TaskEventRoundTrips) {
  TaskEvent e;
  e.seq = 9;
  e.time = absl::FromUnixMillis(123456);
  e.run = testing::MakeRun(1, 2, 3);
  e.type = TaskEventType::kExited;
  e.reason = TerminationReason::kOomKilled;
  e.signal = 9;
  e.message = "oom";
  EXPECT_EQ(TaskEventFromJson(TaskEventToJson(e)).value(), e);
  TaskEvent r;
  r.run = e.run;
  r.type = TaskEventType::kRunning;
  r.pid = 77;
  r.ports = {{"http", 3}};
  r.sandbox = "/s";
  r.time = absl::FromUnixSeconds(1);
  EXPECT_EQ(TaskEventFromJson(TaskEventToJson(r)).value(), r);
  EXPECT_EQ(r.ToString(), "seq=0 1/2/3 RUNNING pid=77");
  TaskEvent ready;
  ready.run = e.run;
  ready.type = TaskEventType::kReadiness;
  ready.readiness = ReadinessState::kNotReady;
  ready.time = absl::FromUnixSeconds(2);
  EXPECT_EQ(TaskEventFromJson(TaskEventToJson(ready)).value(), ready);
  EXPECT_FALSE(ready.terminal());
  EXPECT_EQ(ready.ToString(), "seq=0 1/2/3 READINESS NOT_READY");
}

TEST(AgentJsonTest, ARecordWithoutAKillDelayHadItsSigtermSent) {
  // A record written before deregistration delays: no kill_term_at, SIGTERM already sent.
  RunContext c;
  c.request = testing::Req(12, 3, 4, "sleep 1");
  c.kill_requested = true;
  c.kill_deadline = absl::FromUnixSeconds(2000);
  std::string json = RunContextToJson(c);
  const std::string field = ",\"kill_term_at\":null";
  ASSERT_NE(json.find(field), std::string::npos) << json;
  json.erase(json.find(field), field.size());
  absl::StatusOr<RunContext> back = RunContextFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kill_term_at, absl::InfinitePast());
  EXPECT_EQ(*back, c);
}

}  // namespace
}  // namespace paceline::agent
