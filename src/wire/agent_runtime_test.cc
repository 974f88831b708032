// The agent's side of a gang member's launch: the rendezvous, roles and attempt become the
// runtime's LaunchRequest, and a malformed rendezvous is refused naming its field. A launch's
// readiness check reaches the runtime, and its READINESS events reach the master as RUNNING
// with READY or NOT_READY.

#include "wire/agent_runtime.h"

#include <gtest/gtest.h>

#include "wire/core.h"

namespace paceline::wire {
namespace {

v1::LaunchTask GangLaunch() {
  v1::LaunchTask l;
  *l.mutable_run() = ToProto(RunId{TaskId{JobId(5), 1}, 3});
  TaskSpec t;
  t.command = "train";
  *l.mutable_task() = ToLaunchSpec(t);
  for (uint32_t i : {0u, 1u}) {
    v1::GangPeer* p = l.add_peers();
    p->set_instance(i);
    p->set_host("h" + std::to_string(i));
    p->set_address("198.18.0." + std::to_string(10 + i));
    (*p->mutable_ports())["rendezvous"] = 31000 + i;
    p->set_role(i == 0 ? "launcher" : "worker");
  }
  l.mutable_rendezvous()->set_kind("mpi");
  l.mutable_rendezvous()->set_port("rendezvous");
  l.mutable_rendezvous()->set_attempt(4);
  l.set_role("worker");
  return l;
}

TEST(AgentRuntimeTest, ALaunchKeepsTheGangsRendezvousAndRoles) {
  absl::StatusOr<agent::LaunchRequest> r = FromLaunch(GangLaunch());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->role, "worker");
  ASSERT_TRUE(r->rendezvous.has_value());
  EXPECT_EQ(*r->rendezvous, (agent::GangRendezvousRequest{Rendezvous::kMpi, "rendezvous", 4}));
  ASSERT_TRUE(r->peers.has_value());
  EXPECT_EQ(r->peers->at(0).role, "launcher");
  EXPECT_EQ(r->peers->at(1).address, "198.18.0.11");
  EXPECT_EQ(r->peers->at(1).ports.at("rendezvous"), 31001);
}

TEST(AgentRuntimeTest, WithoutARendezvousTheRequestHasNone) {
  v1::LaunchTask l = GangLaunch();
  l.clear_rendezvous();
  l.clear_role();
  absl::StatusOr<agent::LaunchRequest> r = FromLaunch(l);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->rendezvous.has_value());
  EXPECT_EQ(r->role, "");
}

TEST(AgentRuntimeTest, RefusesAnUnknownKindOrARendezvousWithoutPeers) {
  v1::LaunchTask l = GangLaunch();
  l.mutable_rendezvous()->set_kind("jax");
  absl::StatusOr<agent::LaunchRequest> r = FromLaunch(l);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("launch.rendezvous.kind: 'jax'"), std::string::npos)
      << r.status();
  v1::LaunchTask alone = GangLaunch();
  alone.clear_peers();
  r = FromLaunch(alone);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("launch.rendezvous"), std::string::npos) << r.status();
}

TEST(AgentRuntimeTest, ReadinessTravelsBothWays) {
  v1::LaunchTask l = GangLaunch();
  TaskSpec t;
  t.command = "serve";
  HealthSpec ready;
  ready.check = CommandCheck{"test -f ready"};
  ready.interval = absl::Milliseconds(200);
  ready.failures = 2;
  t.readiness = ready;
  *l.mutable_task() = ToLaunchSpec(t);
  absl::StatusOr<agent::LaunchRequest> r = FromLaunch(l);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->spec.readiness.has_value());
  EXPECT_EQ(*r->spec.readiness, ready);
  EXPECT_FALSE(r->spec.health.has_value());

  agent::TaskEvent e;
  e.run = RunId{TaskId{JobId(5), 1}, 3};
  e.type = agent::TaskEventType::kReadiness;
  for (auto [state, reason] : {std::pair{agent::ReadinessState::kReady, "READY"},
                               std::pair{agent::ReadinessState::kNotReady, "NOT_READY"}}) {
    e.readiness = state;
    v1::TaskStatusUpdate u = ToStatusUpdate(e);
    EXPECT_EQ(u.state(), v1::Task::RUNNING);
    EXPECT_EQ(u.reason(), reason);
  }
}

}  // namespace
}  // namespace paceline::wire
