#include "api/endpoints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::api {
namespace {

using scheduler::Actions;
using scheduler::Launch;
using scheduler::testing::Host;
using scheduler::testing::Pool;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobSpec Service(uint32_t instances) {
  JobSpec s = scheduler::testing::Batch(instances);
  s.name = "web";
  s.type = JobType::kService;
  s.task.ports = {"http", "admin"};
  s.task.readiness = HealthSpec{.check = TcpCheck{.port = "http"}};
  return s;
}

class EndpointsTest : public scheduler::testing::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/prod", Pool(100'000), a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 1), {}, now_, a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 1), {}, now_, a).ok());
    Commit(std::move(a));
  }
  JobId Create(const JobSpec& spec) {
    Actions a;
    absl::StatusOr<JobId> id = core_->job_control().CreateJob(spec, "/prod", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return *id;
  }
  void Ready(const Launch& l, jobmgr::TaskReason reason) {
    Actions a;
    core_->agents().OnStatus(
        {.run = l.run, .host = l.host, .state = TaskState::kRunning, .reason = reason}, now_, a);
    Commit(std::move(a));
  }
};

TEST_F(EndpointsTest, InstancesWithAHostTheirPortsAndWhyTheyAreNotReady) {
  JobId id = Create(Service(3));  // two hosts of one core: instance 2 waits
  Actions placed = Cycle();
  ASSERT_EQ(placed.launches.size(), 2u);
  const Launch& l0 =
      placed.launches[0].run.task.instance == 0 ? placed.launches[0] : placed.launches[1];
  const Launch& l1 = &l0 == &placed.launches[0] ? placed.launches[1] : placed.launches[0];
  Report(l0, TaskState::kRunning);

  absl::StatusOr<JobEndpoints> got = CollectJobEndpoints(*core_, id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->pool, "/prod");
  EXPECT_EQ(got->name, "web");
  ASSERT_EQ(got->endpoints.size(), 2u) << "instance 2 has no host";
  const Endpoint& e0 = got->endpoints[0];
  EXPECT_EQ(e0.instance, 0u);
  EXPECT_EQ(e0.run, 1u);
  EXPECT_EQ(e0.host, l0.host);
  std::map<std::string, uint16_t> ports;
  for (const auto& [name, port] : l0.ports) ports[name] = static_cast<uint16_t>(port);
  EXPECT_EQ(e0.ports, ports);
  EXPECT_EQ(e0.ports.size(), 2u);
  EXPECT_FALSE(e0.ready);
  EXPECT_EQ(e0.why_not_ready, "readiness check not passed yet");
  EXPECT_EQ(got->endpoints[1].why_not_ready, "not running");

  Ready(l0, jobmgr::TaskReason::kReady);
  got = CollectJobEndpoints(*core_, id);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->endpoints[0].ready);
  EXPECT_EQ(got->endpoints[0].why_not_ready, "");

  // Off the loop: a host with no address makes its instances not ready.
  JobEndpoints resolved = *got;
  ResolveAddresses(resolved, [&](const std::string& host) {
    return host == l0.host ? std::string("198.18.0.11") : std::string();
  });
  EXPECT_EQ(resolved.endpoints[0].address, "198.18.0.11");
  EXPECT_TRUE(resolved.endpoints[0].ready);
  JobEndpoints no_agent = *got;
  ResolveAddresses(no_agent, [](const std::string&) { return std::string(); });
  EXPECT_FALSE(no_agent.endpoints[0].ready);
  EXPECT_EQ(no_agent.endpoints[0].why_not_ready, kNoAgentConnected);
  EXPECT_EQ(no_agent.endpoints[1].why_not_ready, "not running") << "the first reason stays";

  dns::ServiceEndpoints d = ToDnsEndpoints(no_agent);
  EXPECT_EQ(d.job_id, id.value());
  ASSERT_EQ(d.instances.size(), 2u);
  EXPECT_EQ(d.instances[0].address, "0.0.0.0");
  EXPECT_FALSE(d.instances[0].ready);
  EXPECT_EQ(ToDnsEndpoints(resolved).instances[0].ports, e0.ports);
  EXPECT_TRUE(ToDnsEndpoints(resolved).instances[0].ready);

  // The version follows the list: equal lists, equal versions; any change, another.
  EXPECT_EQ(VersionOf(resolved), VersionOf(JobEndpoints(resolved)));
  EXPECT_NE(VersionOf(resolved), VersionOf(no_agent));
  Ready(l1, jobmgr::TaskReason::kNone);  // instance 1 starts: its readiness is unknown
  absl::StatusOr<JobEndpoints> later = CollectJobEndpoints(*core_, id);
  ASSERT_TRUE(later.ok());
  EXPECT_NE(VersionOf(*later), VersionOf(*got));
  EXPECT_EQ(later->endpoints[1].why_not_ready, "readiness check not passed yet");
}

TEST_F(EndpointsTest, OnlyServiceAndStatefulJobsHaveEndpoints) {
  JobSpec batch = scheduler::testing::Batch(1);
  JobId b = Create(batch);
  absl::StatusOr<JobEndpoints> got = CollectJobEndpoints(*core_, b);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(got.status().message(),
              HasSubstr("is a batch job: only service and stateful jobs have endpoints"));
  EXPECT_EQ(CollectJobEndpoints(*core_, JobId(99)).status().code(), absl::StatusCode::kNotFound);

  JobId s = Create(Service(1));
  std::vector<uint64_t> ids;
  for (const JobEndpoints& j : CollectEndpoints(*core_)) ids.push_back(j.job_id);
  EXPECT_THAT(ids, ElementsAre(s.value()));
}

}  // namespace
}  // namespace paceline::api
