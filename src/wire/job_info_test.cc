#include "wire/job_info.h"

#include "gtest/gtest.h"
#include "spec/yaml_spec.h"

namespace paceline::wire {
namespace {

JobSpec Parse(const char* yaml) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(yaml, "test.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : JobSpec{};
}

TEST(SetRolesAndGangTest, RolesInOrderWithTheirFirstInstanceAndTheGang) {
  JobSpec spec = Parse(R"(
name: mpi
sla: {min_running_instances: 5}
gang: {rendezvous: mpi, restart: gang, max_restarts: 2}
completion: instance-0
task: {command: sleep 1, resources: {cpu: 1, memory: 64Mi}}
roles:
  - {name: launcher, instances: 1}
  - {name: workers, instances: 4}
)");
  v1::GetJobResponse resp;
  SetRolesAndGang(spec, resp);
  ASSERT_EQ(resp.roles_size(), 2);
  EXPECT_EQ(resp.roles(0).name(), "launcher");
  EXPECT_EQ(resp.roles(0).instances(), 1u);
  EXPECT_EQ(resp.roles(0).first_instance(), 0u);
  EXPECT_EQ(resp.roles(1).name(), "workers");
  EXPECT_EQ(resp.roles(1).instances(), 4u);
  EXPECT_EQ(resp.roles(1).first_instance(), 1u);
  ASSERT_TRUE(resp.has_gang());
  EXPECT_EQ(resp.gang().size(), 5u);
  EXPECT_EQ(resp.gang().rendezvous(), "mpi");
  EXPECT_EQ(resp.gang().restart(), "gang");
  EXPECT_EQ(resp.gang().max_restarts(), 2u);
  EXPECT_EQ(resp.completion(), "instance-0");
}

TEST(SetRolesAndGangTest, APlainJobHasNoRolesAndNoGang) {
  JobSpec spec = Parse(R"(
name: plain
instances: 3
task: {command: sleep 1, resources: {cpu: 1, memory: 64Mi}}
)");
  v1::GetJobResponse resp;
  SetRolesAndGang(spec, resp);
  EXPECT_EQ(resp.roles_size(), 0);
  EXPECT_FALSE(resp.has_gang());
  EXPECT_EQ(resp.completion(), "all");
}

TEST(SetRolesAndGangTest, AServiceHasNoCompletionAndItsGangRestartsAloneByDefault) {
  JobSpec spec = Parse(R"(
name: svc
type: service
instances: 2
sla: {min_running_instances: 2}
task: {command: sleep 1, resources: {cpu: 1, memory: 64Mi}}
)");
  v1::GetJobResponse resp;
  SetRolesAndGang(spec, resp);
  ASSERT_TRUE(resp.has_gang());
  EXPECT_EQ(resp.gang().size(), 2u);
  EXPECT_EQ(resp.gang().rendezvous(), "none");
  EXPECT_EQ(resp.gang().restart(), "instance");
  EXPECT_EQ(resp.completion(), "");
}

}  // namespace
}  // namespace paceline::wire
