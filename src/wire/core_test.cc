#include "wire/core.h"

#include <gtest/gtest.h>

namespace paceline::wire {
namespace {

TaskSpec FullTask() {
  TaskSpec t;
  t.command = "sleep 10";
  t.resources = Resources::Of(500, 256 << 20, 1 << 30, 1000);
  t.ports = {"http", "admin"};
  t.env = {{"A", "1"}, {"B", "two"}};
  HealthSpec h;
  h.check = HttpCheck{"http", "/healthz"};
  h.interval = absl::Seconds(3);
  h.timeout = absl::Milliseconds(700);
  h.failures = 4;
  h.initial_delay = absl::Seconds(1);
  t.health = h;
  h.check = CommandCheck{"test -f ready"};
  h.interval = absl::Milliseconds(200);
  t.readiness = h;
  t.volume = VolumeSpec{64 << 20};
  t.kill_grace = absl::Seconds(7);
  t.user = "nobody";
  return t;
}

TEST(WireCore, LaunchSpecRoundTripsEverythingTheAgentNeeds) {
  TaskSpec t = FullTask();
  absl::StatusOr<TaskSpec> back = FromLaunchSpec(ToLaunchSpec(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
}

TEST(WireCore, EachHealthCheckKindRoundTrips) {
  for (HealthSpec h : {HealthSpec{CommandCheck{"true"}}, HealthSpec{TcpCheck{"db"}}}) {
    TaskSpec t;
    t.command = "x";
    t.health = h;
    absl::StatusOr<TaskSpec> back = FromLaunchSpec(ToLaunchSpec(t));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->health, t.health);
  }
}

TEST(WireCore, AReadinessCheckWithoutAKindNamesItsField) {
  v1::TaskLaunchSpec p = ToLaunchSpec(FullTask());
  p.mutable_readiness()->clear_command();
  absl::StatusOr<TaskSpec> bad = FromLaunchSpec(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("task.readiness: no check"), std::string::npos);
}

TEST(WireCore, PlacementOnlyFieldsStayWithTheMaster) {
  TaskSpec t = FullTask();
  t.gpu_models = {"A100"};
  t.restart.policy = RestartPolicy::kAlways;
  absl::StatusOr<TaskSpec> back = FromLaunchSpec(ToLaunchSpec(t));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->gpu_models.empty());
  EXPECT_EQ(back->restart.policy, RestartPolicy::kNever);
}

TEST(WireCore, MalformedLaunchSpecNamesTheField) {
  v1::TaskLaunchSpec p = ToLaunchSpec(FullTask());
  p.set_kill_grace_ms(-1);
  absl::StatusOr<TaskSpec> bad = FromLaunchSpec(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("task.kill_grace_ms"), std::string::npos);

  p = ToLaunchSpec(FullTask());
  p.mutable_health()->set_timeout_ms(-5);
  bad = FromLaunchSpec(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("health.timeout_ms"), std::string::npos);

  p = ToLaunchSpec(FullTask());
  p.mutable_health()->clear_check();
  EXPECT_FALSE(FromLaunchSpec(p).ok());
}

TEST(WireCore, TaskStatesMapOneToOneByName) {
  for (int i = 0; i < kNumTaskStates; ++i) {
    TaskState s = static_cast<TaskState>(i);
    v1::Task::State p = ToProto(s);
    EXPECT_EQ(v1::Task::State_Name(p), TaskStateName(s));
    absl::StatusOr<TaskState> back = FromProto(p, "state");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  EXPECT_FALSE(FromProto(v1::Task::STATE_UNSPECIFIED, "state").ok());
  EXPECT_FALSE(FromProto(static_cast<v1::Task::State>(99), "state").ok());
}

}  // namespace
}  // namespace paceline::wire
