// Printing: the canonical form, summaries, and the round-trip property
// Parse(Print(s)) == s over many generated specs.

#include <cstdlib>
#include <iostream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec/spec_generator.h"
#include "spec/spec_validation.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;

// A fixed seed keeps failures reproducible; PACELINE_TEST_SEED overrides it to explore.
uint64_t Seed() {
  const char* env = std::getenv("PACELINE_TEST_SEED");
  uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : 20240601;
  std::cout << "round-trip seed: " << seed << " (set PACELINE_TEST_SEED to change)" << std::endl;
  return seed;
}

JobSpec ExampleJob() {
  JobSpec j;
  j.name = "nightly-etl";
  j.owner = "ads-team";
  j.instances = 1000;
  j.priority = 10;
  j.labels = {{"team", "ads"}};
  j.sla.max_running_instances = 200;
  j.sla.max_running_time = absl::Hours(2);
  j.task.command = "./etl --shard $PACELINE_INSTANCE_ID";
  j.task.resources = Resources::Of(1000, int64_t{2} << 30, int64_t{1} << 30, 500);
  j.task.ports = {"http"};
  j.task.health = HealthSpec{HttpCheck{"http", "/healthz"}, absl::Seconds(5), absl::Seconds(2), 3,
                             absl::ZeroDuration()};
  j.task.constraints = {LabelConstraint{"zone", ConstraintOp::kIn, {"a", "b"}, 0},
                        LabelConstraint{"cores", ConstraintOp::kGt, {}, 8.5},
                        MaxPerHostConstraint{1, ""}};
  TaskSpec& o = j.OverrideTask(0);
  o.command = "./etl --coordinator";
  o.controller = true;
  return j;
}

TEST(PrintJobSpecTest, Canonical) {
  EXPECT_EQ(PrintJobSpec(ExampleJob()), R"(name: nightly-etl
owner: ads-team
type: batch
instances: 1000
priority: 10
labels:
  team: ads
sla:
  max_running_instances: 200
  max_running_time: 2h
task:
  command: ./etl --shard $PACELINE_INSTANCE_ID
  resources: {cpu: 1, memory: 2Gi, disk: 1Gi, gpu: 0.5}
  ports: [http]
  health:
    http: {port: http, path: /healthz}
    interval: 5s
    timeout: 2s
  constraints:
    - {host_label: zone, op: in, values: [a, b]}
    - {host_label: cores, op: gt, value: 8.5}
    - {max_per_host: 1}
instance_overrides:
  0:
    command: ./etl --coordinator
    controller: true
)");
}

TEST(PrintJobSpecTest, QuotesWhatWouldReadDifferently) {
  JobSpec j = ExampleJob();
  j.owner = "true";
  j.description = "a: b\n# not a comment";
  j.labels = {{"team", ""}, {"null", "~"}};
  std::string yaml = PrintJobSpec(j);
  EXPECT_THAT(yaml, HasSubstr("description: \"a: b\\n# not a comment\""));
  absl::StatusOr<JobSpec> back = ParseJobSpec(yaml, "printed");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(*back, j);
}

TEST(PrintPoolSpecTest, Canonical) {
  PoolSpec p;
  p.description = "ads training";
  p.dim(Dim::kCpu) = DimSpec{20000, 100000, 1};
  p.dim(Dim::kGpu) = DimSpec{0, 8000, 2.5};
  p.controller_limit_percent = 10;
  EXPECT_EQ(PrintPoolSpec(p), R"(description: ads training
type: elastic
resources:
  cpu: {reservation: 20, limit: 100, share: 1}
  gpu: {reservation: 0, limit: 8, share: 2.5}
controller_limit: 10%
)");
  EXPECT_EQ(PrintPoolSpec(PoolSpec{}), "type: elastic\n");
}

TEST(SummaryTest, Job) {
  JobSpec j = ExampleJob();
  j.task.resources = Resources::Of(1000, int64_t{2} << 30, int64_t{1} << 30, 500);
  EXPECT_EQ(SummarizeJobSpec(j),
            "job nightly-etl: batch, 1000 instances, priority 10, per instance cpu=1 memory=2Gi "
            "disk=1Gi gpu=0.5, 1 instance override");
  j.type = JobType::kDaemon;
  j.instances = 0;
  j.instance_overrides.clear();
  EXPECT_EQ(SummarizeJobSpec(j),
            "job nightly-etl: daemon, one instance per host, priority 10, per instance cpu=1 "
            "memory=2Gi disk=1Gi gpu=0.5");
}

TEST(SummaryTest, Pool) {
  PoolSpec p;
  p.dim(Dim::kCpu) = DimSpec{20000, 100000, 1};
  p.slack_limit_percent = 30;
  EXPECT_EQ(SummarizePoolSpec(p),
            "pool: elastic, reservation cpu=20 memory=0 disk=0 gpu=0, limit cpu=100 "
            "memory=unlimited disk=unlimited gpu=unlimited, slack_limit 30%");
}

TEST(RoundTripTest, GeneratedSpecsAreValid) {
  std::mt19937_64 rng(Seed());
  for (int i = 0; i < 500; ++i) {
    JobSpec j = RandomJobSpec(rng);
    ASSERT_TRUE(ToStatus(ValidateJobSpec(j)).ok()) << ToStatus(ValidateJobSpec(j)) << " #" << i;
    PoolSpec p = RandomPoolSpec(rng);
    ASSERT_TRUE(ToStatus(ValidatePoolSpec(p)).ok()) << ToStatus(ValidatePoolSpec(p)) << " #" << i;
  }
}

TEST(RoundTripTest, JobSpecs) {
  std::mt19937_64 rng(Seed());
  for (int i = 0; i < 2000; ++i) {
    JobSpec spec = RandomJobSpec(rng);
    std::string yaml = PrintJobSpec(spec);
    absl::StatusOr<JobSpec> back = ParseJobSpec(yaml, "printed.yaml");
    ASSERT_TRUE(back.ok()) << "#" << i << ": " << back.status() << "\n" << yaml;
    ASSERT_EQ(*back, spec) << "#" << i << ":\n" << yaml << "---\n" << PrintJobSpec(*back);
    ASSERT_EQ(PrintJobSpec(*back), yaml) << "#" << i;  // printing is canonical
  }
}

TEST(RoundTripTest, PoolSpecs) {
  std::mt19937_64 rng(Seed());
  for (int i = 0; i < 2000; ++i) {
    PoolSpec spec = RandomPoolSpec(rng);
    std::string yaml = PrintPoolSpec(spec);
    absl::StatusOr<PoolSpec> back = ParsePoolSpec(yaml, "printed.yaml");
    ASSERT_TRUE(back.ok()) << "#" << i << ": " << back.status() << "\n" << yaml;
    ASSERT_EQ(*back, spec) << "#" << i << ":\n" << yaml << "---\n" << PrintPoolSpec(*back);
  }
}

}  // namespace
}  // namespace paceline
