// Tests of the frameworks' rendezvous conventions (rendezvous.h) and of the gang hook that
// writes them into a member's environment and sandbox.

#include "agent/launch/rendezvous.h"

#include "agent/base/run_context.h"
#include "agent/launch/gang_hook.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

using testing::MakeRun;
using testing::ReadAll;
using testing::TempDir;

GangPeer Peer(std::string host, std::string address, uint16_t port, std::string role = "") {
  GangPeer p;
  p.host = std::move(host);
  p.address = std::move(address);
  p.ports = {{"rendezvous", port}, {"http", static_cast<uint16_t>(port + 1000)}};
  p.role = std::move(role);
  return p;
}

// Four members on three hosts: 10 and 11 share h1, 12 on h2, 13 on h3.
std::map<uint32_t, GangPeer> FourOnThreeHosts() {
  return {{10, Peer("h1", "198.18.0.11", 31000)},
          {11, Peer("h1", "198.18.0.11", 31001)},
          {12, Peer("h2", "198.18.0.12", 31002)},
          {13, Peer("h3", "198.18.0.13", 31003)}};
}

RendezvousInput Input(uint32_t instance, const std::map<uint32_t, GangPeer>& peers, Rendezvous kind,
                      uint32_t attempt = 0) {
  RendezvousInput in;
  in.instance = instance;
  in.peers = &peers;
  in.rendezvous = {kind, "rendezvous", attempt};
  in.sandbox = "/sb";
  return in;
}

TEST(PyTorchRendezvousTest, RanksByInstanceAndLocalRanksByHost) {
  auto peers = FourOnThreeHosts();
  struct Want {
    uint32_t instance;
    std::string rank, local_rank, local_world, group_rank;
  };
  for (const Want& w : std::vector<Want>{{10, "0", "0", "2", "0"},
                                         {11, "1", "1", "2", "0"},
                                         {12, "2", "0", "1", "1"},
                                         {13, "3", "0", "1", "2"}}) {
    SCOPED_TRACE(w.instance);
    auto env = PyTorchEnv(Input(w.instance, peers, Rendezvous::kPyTorch, 2));
    ASSERT_TRUE(env.ok()) << env.status();
    EXPECT_EQ(env->at("MASTER_ADDR"), "198.18.0.11");
    EXPECT_EQ(env->at("MASTER_PORT"), "31000");  // the first member's rendezvous port
    EXPECT_EQ(env->at("WORLD_SIZE"), "4");
    EXPECT_EQ(env->at("RANK"), w.rank);
    EXPECT_EQ(env->at("LOCAL_RANK"), w.local_rank);
    EXPECT_EQ(env->at("LOCAL_WORLD_SIZE"), w.local_world);
    EXPECT_EQ(env->at("GROUP_RANK"), w.group_rank);
    EXPECT_EQ(env->at("GROUP_WORLD_SIZE"), "3");
    EXPECT_EQ(env->at("ROLE_NAME"), "default");
    EXPECT_EQ(env->at("ROLE_RANK"), w.rank);
    EXPECT_EQ(env->at("ROLE_WORLD_SIZE"), "4");
    EXPECT_EQ(env->at("TORCHELASTIC_RESTART_COUNT"), "2");
    EXPECT_FALSE(env->contains("GLOO_SOCKET_IFNAME"));  // no interfaces given
  }
}

TEST(PyTorchRendezvousTest, RoleRanksCountTheMembersOfTheRole) {
  std::map<uint32_t, GangPeer> peers = {{0, Peer("h1", "a1", 1, "ps")},
                                        {1, Peer("h2", "a2", 2, "worker")},
                                        {2, Peer("h3", "a3", 3, "worker")}};
  auto env = PyTorchEnv(Input(2, peers, Rendezvous::kPyTorch));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("RANK"), "2");
  EXPECT_EQ(env->at("ROLE_NAME"), "worker");
  EXPECT_EQ(env->at("ROLE_RANK"), "1");
  EXPECT_EQ(env->at("ROLE_WORLD_SIZE"), "2");
}

TEST(PyTorchRendezvousTest, MissingAddressesFallBackToHostNames) {
  std::map<uint32_t, GangPeer> peers = {{0, Peer("h1", "", 31000)}, {1, Peer("h2", "", 31001)}};
  auto env = PyTorchEnv(Input(1, peers, Rendezvous::kPyTorch));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("MASTER_ADDR"), "h1");
  EXPECT_EQ(env->at("RANK"), "1");
  EXPECT_EQ(env->at("GROUP_RANK"), "1");
}

TEST(PyTorchRendezvousTest, NamesTheInterfaceHoldingThisHostsAddress) {
  auto peers = FourOnThreeHosts();
  RendezvousInput in = Input(12, peers, Rendezvous::kPyTorch);
  in.interfaces = {{"lo", "127.0.0.1"}, {"eth0", "198.18.0.11"}, {"veth-h2", "198.18.0.12"}};
  auto env = PyTorchEnv(in);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("GLOO_SOCKET_IFNAME"), "veth-h2");
  EXPECT_EQ(env->at("NCCL_SOCKET_IFNAME"), "veth-h2");
}

TEST(PyTorchRendezvousTest, RefusesAMissingPortOrAMemberNotAmongThePeers) {
  auto peers = FourOnThreeHosts();
  peers[10].ports.erase("rendezvous");
  auto env = PyTorchEnv(Input(12, peers, Rendezvous::kPyTorch));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.status().message().find("instance 10 has no port named 'rendezvous'"),
            std::string::npos)
      << env.status();
  auto absent = PyTorchEnv(Input(99, FourOnThreeHosts(), Rendezvous::kPyTorch));
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find("instance 99 is not among its gang's peers"),
            std::string::npos)
      << absent.status();
}

TEST(MpiRendezvousTest, OneLinePerAddressWithItsMembersAsSlots) {
  EXPECT_EQ(MpiHostfile(FourOnThreeHosts()),
            "198.18.0.11 slots=2\n198.18.0.12 slots=1\n198.18.0.13 slots=1\n");
  // Addresses unknown: host names; hosts in the order of their first member.
  std::map<uint32_t, GangPeer> peers = {
      {0, Peer("h2", "", 1)}, {1, Peer("h1", "", 2)}, {2, Peer("h2", "", 3)}};
  EXPECT_EQ(MpiHostfile(peers), "h2 slots=2\nh1 slots=1\n");
}

TEST(MpiRendezvousTest, PlanWritesTheHostfileAndPointsOpenMpiAtIt) {
  auto peers = FourOnThreeHosts();
  auto plan = PlanRendezvous(Input(13, peers, Rendezvous::kMpi, 1));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->files.at("hostfile"), MpiHostfile(peers));
  EXPECT_EQ(plan->env.at("PACELINE_MPI_HOSTFILE"), "/sb/hostfile");
  EXPECT_EQ(plan->env.at("OMPI_MCA_orte_default_hostfile"), "/sb/hostfile");
  EXPECT_EQ(plan->env.at("PRTE_MCA_prte_default_hostfile"), "/sb/hostfile");
  EXPECT_EQ(plan->env.at("PACELINE_GANG_ATTEMPT"), "1");
  EXPECT_FALSE(plan->env.contains("MASTER_ADDR"));
}

TEST(TensorFlowRendezvousTest, WorkersWithoutRoles) {
  auto peers = FourOnThreeHosts();
  auto config = TfConfig(Input(11, peers, Rendezvous::kTensorFlow));
  ASSERT_TRUE(config.ok()) << config.status();
  nlohmann::json j = nlohmann::json::parse(*config);
  EXPECT_EQ(j["cluster"].size(), 1u);
  EXPECT_EQ(j["cluster"]["worker"], nlohmann::json({"198.18.0.11:31000", "198.18.0.11:31001",
                                                    "198.18.0.12:31002", "198.18.0.13:31003"}));
  EXPECT_EQ(j["task"], nlohmann::json({{"type", "worker"}, {"index", 1}}));
}

TEST(TensorFlowRendezvousTest, RolesKeepTensorFlowsNamesAndOthersAreWorkers) {
  std::map<uint32_t, GangPeer> peers = {{0, Peer("h1", "a1", 100, "chief")},
                                        {1, Peer("h2", "a2", 200, "ps")},
                                        {2, Peer("h3", "", 300, "trainer")},
                                        {3, Peer("h4", "a4", 400, "trainer")},
                                        {4, Peer("h5", "a5", 500, "evaluator")}};
  auto config = TfConfig(Input(3, peers, Rendezvous::kTensorFlow));
  ASSERT_TRUE(config.ok()) << config.status();
  nlohmann::json j = nlohmann::json::parse(*config);
  EXPECT_EQ(j["cluster"]["chief"], nlohmann::json({"a1:100"}));
  EXPECT_EQ(j["cluster"]["ps"], nlohmann::json({"a2:200"}));
  EXPECT_EQ(j["cluster"]["worker"], nlohmann::json({"h3:300", "a4:400"}));
  EXPECT_EQ(j["cluster"]["evaluator"], nlohmann::json({"a5:500"}));
  EXPECT_EQ(j["task"], nlohmann::json({{"type", "worker"}, {"index", 1}}));
  auto chief = TfConfig(Input(0, peers, Rendezvous::kTensorFlow));
  ASSERT_TRUE(chief.ok());
  EXPECT_EQ(nlohmann::json::parse(*chief)["task"],
            nlohmann::json({{"type", "chief"}, {"index", 0}}));
}

TEST(TensorFlowRendezvousTest, EveryMemberNeedsTheRendezvousPort) {
  auto peers = FourOnThreeHosts();
  peers[13].ports.erase("rendezvous");
  auto config = TfConfig(Input(10, peers, Rendezvous::kTensorFlow));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("instance 13 has no port named 'rendezvous'"),
            std::string::npos)
      << config.status();
}

TEST(RendezvousTest, NoneGivesTheAttemptAlone) {
  auto peers = FourOnThreeHosts();
  auto plan = PlanRendezvous(Input(10, peers, Rendezvous::kNone, 3));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->env, (std::map<std::string, std::string>{{"PACELINE_GANG_ATTEMPT", "3"}}));
  EXPECT_TRUE(plan->files.empty());
}

RunContext GangCtx(const std::string& sandbox, uint32_t instance) {
  RunContext c;
  c.request.run = MakeRun(7, instance, 1);
  c.key = RunKey(c.request.run);
  c.sandbox = sandbox;
  c.request.peers = FourOnThreeHosts();
  return c;
}

TEST(GangHookRendezvousTest, AddsTheConventionAndLeavesTheTasksOwnVariables) {
  TempDir dir;
  RunContext c = GangCtx(dir.path(), 11);
  c.request.rendezvous = GangRendezvousRequest{Rendezvous::kPyTorch, "rendezvous", 1};
  c.request.role = "trainer";
  c.request.spec.env = {{"MASTER_PORT", "29500"}, {"PACELINE_GANG_ATTEMPT", "9"}};
  GangHook hook;
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.env.at("RANK"), "1");
  EXPECT_EQ(c.env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(c.env.at("MASTER_ADDR"), "198.18.0.11");
  EXPECT_FALSE(c.env.contains("MASTER_PORT"));  // the task's own value stands
  EXPECT_EQ(c.env.at("PACELINE_GANG_ATTEMPT"), "1");
  EXPECT_EQ(c.env.at("PACELINE_ROLE"), "trainer");
  EXPECT_EQ(c.env.at("PACELINE_PEERS_FILE"), dir.path() + "/peers.json");
}

TEST(GangHookRendezvousTest, WritesTheHostfileAndPeerRoles) {
  TempDir dir;
  RunContext c = GangCtx(dir.path(), 10);
  (*c.request.peers)[12].role = "launcher";
  c.request.rendezvous = GangRendezvousRequest{Rendezvous::kMpi, "rendezvous", 0};
  GangHook hook;
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.env.at("PACELINE_MPI_HOSTFILE"), dir.path() + "/hostfile");
  EXPECT_EQ(ReadAll(dir.path() + "/hostfile"), MpiHostfile(*c.request.peers));
  nlohmann::json peers = nlohmann::json::parse(ReadAll(dir.path() + "/peers.json"));
  EXPECT_EQ(peers["12"]["role"], "launcher");
  EXPECT_FALSE(peers["10"].contains("role"));
}

TEST(GangHookRendezvousTest, AGangWithoutRendezvousKeepsTodaysEnvironment) {
  TempDir dir;
  RunContext c = GangCtx(dir.path(), 10);
  GangHook hook;
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(
      c.env,
      (std::map<std::string, std::string>{{"PACELINE_PEERS_FILE", dir.path() + "/peers.json"}}));
  // A role alone, without a gang.
  RunContext solo;
  solo.request.run = MakeRun(7, 0, 1);
  solo.request.role = "driver";
  ASSERT_TRUE(hook.Prepare(solo).ok());
  EXPECT_EQ(solo.env, (std::map<std::string, std::string>{{"PACELINE_ROLE", "driver"}}));
}

TEST(GangHookRendezvousTest, AFailedConventionFailsTheLaunch) {
  TempDir dir;
  RunContext c = GangCtx(dir.path(), 10);
  c.request.rendezvous = GangRendezvousRequest{Rendezvous::kPyTorch, "missing", 0};
  GangHook hook;
  absl::Status s = hook.Prepare(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(GangHookRendezvousTest, HostInterfacesIncludeLoopback) {
  std::vector<NetInterface> list = GangHook::HostInterfaces();
  EXPECT_TRUE(std::any_of(list.begin(), list.end(),
                          [](const NetInterface& i) { return i.address == "127.0.0.1"; }));
}

}  // namespace
}  // namespace paceline::agent
