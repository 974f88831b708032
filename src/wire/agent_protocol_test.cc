// The master's side of a gang member's launch: peers with their roles, the rendezvous and the
// gang's attempt, the instance's role.

#include "wire/agent_protocol.h"

#include <gtest/gtest.h>

namespace paceline::wire {
namespace {

scheduler::Launch GangLaunch() {
  scheduler::Launch l;
  l.run = RunId{TaskId{JobId(5), 1}, 3};
  l.host = "h1";
  TaskSpec t;
  t.command = "train";
  t.ports = {"rendezvous"};
  l.task = std::make_shared<const TaskSpec>(t);
  l.ports = {{"rendezvous", 31001}};
  l.gang_size = 2;
  l.peers = std::make_shared<const std::vector<scheduler::GangPeer>>(
      std::vector<scheduler::GangPeer>{{0, "h0", {{"rendezvous", 31000}}, "chief"},
                                       {1, "h1", {{"rendezvous", 31001}}, "worker"}});
  l.role = "worker";
  l.rendezvous = Rendezvous::kPyTorch;
  l.rendezvous_port = "rendezvous";
  l.gang_attempt = 2;
  return l;
}

TEST(AgentProtocolTest, AGangLaunchCarriesItsRendezvousAndRoles) {
  v1::MasterMessage m = ToLaunchMessage(GangLaunch());
  const v1::LaunchTask& l = m.launch();
  EXPECT_EQ(l.role(), "worker");
  ASSERT_TRUE(l.has_rendezvous());
  EXPECT_EQ(l.rendezvous().kind(), "pytorch");
  EXPECT_EQ(l.rendezvous().port(), "rendezvous");
  EXPECT_EQ(l.rendezvous().attempt(), 2u);
  ASSERT_EQ(l.peers_size(), 2);
  EXPECT_EQ(l.peers(0).role(), "chief");
  EXPECT_EQ(l.peers(1).role(), "worker");
  EXPECT_EQ(l.peers(0).ports().at("rendezvous"), 31000u);
}

TEST(AgentProtocolTest, AGangWithoutRendezvousStillLearnsItsAttempt) {
  scheduler::Launch g = GangLaunch();
  g.rendezvous = Rendezvous::kNone;
  g.role.clear();
  v1::MasterMessage m = ToLaunchMessage(g);
  ASSERT_TRUE(m.launch().has_rendezvous());
  EXPECT_EQ(m.launch().rendezvous().kind(), "none");
  EXPECT_EQ(m.launch().rendezvous().attempt(), 2u);
  EXPECT_EQ(m.launch().role(), "");
}

TEST(AgentProtocolTest, ATaskOutsideAGangHasNoRendezvous) {
  scheduler::Launch l = GangLaunch();
  l.peers = nullptr;
  l.gang_size = 1;
  l.rendezvous = Rendezvous::kNone;
  l.role = "driver";
  v1::MasterMessage m = ToLaunchMessage(l);
  EXPECT_FALSE(m.launch().has_rendezvous());
  EXPECT_EQ(m.launch().peers_size(), 0);
  EXPECT_EQ(m.launch().role(), "driver");
}

}  // namespace
}  // namespace paceline::wire
