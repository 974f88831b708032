#include "masterd/followed_endpoints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::masterd {
namespace {

records::TaskRecord LiveRun(uint64_t job, uint32_t instance, std::string host,
                            std::vector<uint16_t> ports, std::string readiness = "READY") {
  records::TaskRecord t;
  t.id = TaskId{JobId(job), instance};
  t.run = 1;
  t.state = TaskState::kRunning;
  t.host = std::move(host);
  t.health = "HEALTHY";
  t.readiness = std::move(readiness);
  t.ports = std::move(ports);
  return t;
}

records::JobRecord Service(uint64_t id, JobType type, uint32_t instances) {
  records::JobRecord j;
  j.id = JobId(id);
  j.pool = "/web";
  j.spec.name = "api";
  j.spec.type = type;
  j.spec.instances = instances;
  j.spec.task.ports = {"http", "admin"};
  j.instances = instances;
  return j;
}

store::StoreMirror Mirror(records::StoreContents contents) {
  store::StoreChanges changes;
  changes.rev = 1;
  changes.changed = std::move(contents);
  store::StoreMirror m;
  m.Apply(std::move(changes));
  return m;
}

TEST(FollowedEndpoints, EachInstanceHasItsHostsStoredAddressItsPortsByNameAndServesByTheRule) {
  records::StoreContents c;
  c.jobs = {Service(1, JobType::kService, 4), Service(2, JobType::kBatch, 1)};
  c.jobs[1].spec.name = "etl";
  c.tasks = {
      LiveRun(1, 0, "h1", {31000, 31001}),
      LiveRun(1, 1, "h2", {31002, 31003}, "NOT_READY"),  // not ready: listed, not serving
      LiveRun(1, 2, "h3", {31004, 31005}),               // its host registered no address
      LiveRun(1, 5, "h1", {31006, 31007}),  // removed by a scale-down: its record stays
      LiveRun(2, 0, "h1", {}),              // a batch job has no endpoints
  };
  records::HostRecord h1{.name = "h1"}, h2{.name = "h2"}, h3{.name = "h3"};
  h1.address = "198.18.0.11";
  h2.address = "198.18.0.12";
  c.hosts = {h1, h2, h3};
  std::vector<dns::ServiceEndpoints> got = FollowedEndpoints(Mirror(c));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].job_id, 1u);
  EXPECT_EQ(got[0].pool, "/web");
  EXPECT_EQ(got[0].name, "api");
  using E = dns::InstanceEndpoint;
  EXPECT_THAT(got[0].instances, ::testing::ElementsAre(
                                    E{0, "198.18.0.11", {{"http", 31000}, {"admin", 31001}}, true},
                                    E{1, "198.18.0.12", {{"http", 31002}, {"admin", 31003}}, false},
                                    E{2, "0.0.0.0", {{"http", 31004}, {"admin", 31005}}, false}));
}

TEST(FollowedEndpoints, ARunNamesItsPortsByTheSpecVersionItRunsAndLeavesWithItsState) {
  records::StoreContents c;
  c.jobs = {Service(1, JobType::kStateful, 2)};
  c.jobs[0].version = 2;
  c.jobs[0].old_specs[1] = c.jobs[0].spec;
  c.jobs[0].old_specs[1].task.ports = {"web"};
  c.tasks = {LiveRun(1, 0, "h1", {31000}), LiveRun(1, 1, "h1", {31002, 31003})};
  c.tasks[0].spec_version = 1;  // not updated yet
  c.tasks[1].spec_version = 2;
  c.tasks[1].state = TaskState::kKilling;
  records::HostRecord h1{.name = "h1"};
  h1.address = "fd00::7";
  c.hosts = {h1};
  std::vector<dns::ServiceEndpoints> got = FollowedEndpoints(Mirror(c));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].instances.size(), 2u);
  EXPECT_EQ(got[0].instances[0].ports, (std::map<std::string, uint16_t>{{"web", 31000}}));
  EXPECT_TRUE(got[0].instances[0].ready);
  EXPECT_EQ(got[0].instances[0].address, "fd00::7");
  EXPECT_FALSE(got[0].instances[1].ready);  // being stopped: out of DNS at once
}

}  // namespace
}  // namespace paceline::masterd
