#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

constexpr const char* kExample = R"(# job spec
name: nightly-etl
description: nightly extract-transform-load of the ads logs
owner: ads-team
type: batch                 # batch | service | stateful | daemon
instances: 1000
priority: 10                # higher first
labels: {team: ads}
sla: {preemptible: true, revocable: false, max_running_instances: 200,
      min_running_instances: 1, max_running_time: 2h, max_unavailable_instances: 1}
task:
  command: "./etl --shard $PACELINE_INSTANCE_ID"
  resources: {cpu: 1, memory: 2Gi, disk: 1Gi, gpu: 0.5}
  gpu_models: [V100M32, A100]
  ports: [http]
  env: {MODE: full}
  restart: {policy: on-failure, max_failures: 3, initial_backoff: 1s, max_backoff: 5m}
  health: {http: {port: http, path: /healthz}, interval: 5s, timeout: 2s, failures: 3, initial_delay: 10s}
  constraints:
    - {host_label: zone, op: in, values: [a, b]}
    - {host_label: cores, op: gt, value: 8}
    - {max_per_host: 1, task_label: team}
  kill_grace: 30s
  exclusive: gpu-team
  user: nobody
  duration: 10m        # simulated run time, for `paceline sim` only
instance_overrides:
  0: {command: "./etl --coordinator", controller: true, env: {ROLE: driver}, resources: {cpu: 2, memory: 4Gi}}
)";

// A minimal valid job with `extra` appended at the top level.
std::string Minimal(absl::string_view extra = "") {
  return absl::StrCat(
      "name: j\ninstances: 2\ntask:\n  command: run\n  resources: {cpu: 1, memory: 1Gi}\n", extra);
}

TEST(ParseJobSpecTest, Example) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(kExample, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "nightly-etl");
  EXPECT_EQ(spec->owner, "ads-team");
  EXPECT_EQ(spec->type, JobType::kBatch);
  EXPECT_EQ(spec->instances, 1000u);
  EXPECT_EQ(spec->priority, 10);
  EXPECT_EQ(spec->labels, (std::map<std::string, std::string>{{"team", "ads"}}));
  EXPECT_EQ(spec->sla.max_running_instances, 200u);
  EXPECT_EQ(spec->sla.max_running_time, absl::Hours(2));
  const TaskSpec& t = spec->task;
  EXPECT_EQ(t.command, "./etl --shard $PACELINE_INSTANCE_ID");
  EXPECT_EQ(t.resources, Resources::Of(1000, 2 * kGi, kGi, 500));
  EXPECT_EQ(t.gpu_models, (std::vector<std::string>{"V100M32", "A100"}));
  EXPECT_EQ(t.ports, std::vector<std::string>{"http"});
  EXPECT_EQ(t.env.at("MODE"), "full");
  EXPECT_EQ(t.restart,
            (RestartSpec{RestartPolicy::kOnFailure, 3, absl::Seconds(1), absl::Minutes(5)}));
  ASSERT_TRUE(t.health.has_value());
  EXPECT_EQ(std::get<HttpCheck>(t.health->check), (HttpCheck{"http", "/healthz"}));
  EXPECT_EQ(t.health->interval, absl::Seconds(5));
  EXPECT_EQ(t.health->timeout, absl::Seconds(2));
  EXPECT_EQ(t.health->initial_delay, absl::Seconds(10));
  ASSERT_EQ(t.constraints.size(), 3u);
  EXPECT_EQ(std::get<LabelConstraint>(t.constraints[0]),
            (LabelConstraint{"zone", ConstraintOp::kIn, {"a", "b"}, 0}));
  EXPECT_EQ(std::get<LabelConstraint>(t.constraints[1]),
            (LabelConstraint{"cores", ConstraintOp::kGt, {}, 8}));
  EXPECT_EQ(std::get<MaxPerHostConstraint>(t.constraints[2]), (MaxPerHostConstraint{1, "team"}));
  EXPECT_EQ(t.kill_grace, absl::Seconds(30));
  EXPECT_EQ(t.exclusive, "gpu-team");
  EXPECT_EQ(t.user, "nobody");
  EXPECT_EQ(t.duration, absl::Minutes(10));
  ASSERT_EQ(spec->instance_overrides.size(), 1u);
  const TaskSpec& o = spec->instance_overrides.at(0).task;
  EXPECT_EQ(o.command, "./etl --coordinator");
  EXPECT_EQ(o.controller, true);
  // Dimensions the override leaves out are inherited from the template.
  EXPECT_EQ(o.resources, Resources::Of(2000, 4 * kGi, kGi, 500));
  EXPECT_EQ(o.env, (std::map<std::string, std::string>{{"MODE", "full"}, {"ROLE", "driver"}}));
  EXPECT_EQ(o.health, t.health) << "what the override leaves out is the template's";
  EXPECT_EQ(&spec->TaskRef(0), &o);
  EXPECT_EQ(&spec->TaskRef(1), &spec->task) << "no copy for an instance without an override";
}

TEST(ParseJobSpecTest, ReadinessAndDeregistrationDelayOfAService) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(R"(name: web
type: service
instances: 3
task:
  command: ./serve
  resources: {cpu: 1, memory: 1Gi}
  ports: [http]
  health: {tcp: {port: http}}
  readiness: {http: {port: http, path: /ready}, interval: 200ms, failures: 2}
  deregistration_delay: 5s
instance_overrides:
  0: {readiness: null, deregistration_delay: null}
)",
                                              "web.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const TaskSpec& t = spec->task;
  ASSERT_TRUE(t.readiness.has_value());
  EXPECT_EQ(std::get<HttpCheck>(t.readiness->check), (HttpCheck{"http", "/ready"}));
  EXPECT_EQ(t.readiness->interval, absl::Milliseconds(200));
  EXPECT_EQ(t.readiness->failures, 2u);
  EXPECT_EQ(t.readiness->timeout, absl::Seconds(5)) << "the check's defaults are health's";
  EXPECT_EQ(DeregistrationDelayOf(spec->type, t), absl::Seconds(5));
  // The override removes both: no readiness check, and the service's default delay.
  const TaskSpec& o = spec->TaskRef(0);
  EXPECT_FALSE(o.readiness.has_value());
  EXPECT_TRUE(o.health.has_value());
  EXPECT_EQ(DeregistrationDelayOf(spec->type, o), kDefaultDeregistrationDelay);
  // Batch jobs stop at once.
  EXPECT_EQ(DeregistrationDelayOf(JobType::kBatch, TaskSpec{}), absl::ZeroDuration());
  EXPECT_EQ(DeregistrationDelayOf(JobType::kStateful, TaskSpec{}), absl::Seconds(3));
}

TEST(ParseJobSpecTest, Defaults) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(Minimal(), "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobSpec expected;
  expected.name = "j";
  expected.instances = 2;
  expected.task.command = "run";
  expected.task.resources = Resources::Of(1000, kGi);
  EXPECT_EQ(*spec, expected);
  EXPECT_EQ(spec->type, JobType::kBatch);
  EXPECT_EQ(spec->sla, SlaSpec{});
  EXPECT_EQ(spec->task.restart.policy, RestartPolicy::kNever);
  EXPECT_EQ(spec->task.kill_grace, absl::Seconds(30));
}

TEST(ParseJobSpecTest, Daemon) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(
      "name: logs\ntype: daemon\ntask: {command: ship, resources: {cpu: 100m, memory: 64Mi}}\n"
      "update: {batch_size: 5}\n",
      "d.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->type, JobType::kDaemon);
  EXPECT_EQ(spec->instances, 0u);
  EXPECT_EQ(spec->task.resources, Resources::Of(100, 64 * kMi));
  EXPECT_EQ(spec->update.batch_size, 5u);
}

TEST(ParseJobSpecTest, StatefulWithVolume) {
  absl::StatusOr<JobSpec> spec =
      ParseJobSpec(absl::StrCat("type: stateful\n", Minimal("  volume: {size: 10Gi}\n")), "s");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->task.volume, VolumeSpec{10 * kGi});
}

TEST(ParseJobSpecTest, HealthKinds) {
  absl::StatusOr<JobSpec> cmd = ParseJobSpec(Minimal("  health: {command: \"curl -f x\"}\n"), "j");
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(std::get<CommandCheck>(cmd->task.health->check).command, "curl -f x");
  EXPECT_EQ(cmd->task.health->interval, absl::Seconds(10));
  absl::StatusOr<JobSpec> tcp =
      ParseJobSpec(Minimal("  ports: [db]\n  health: {tcp: {port: db}}\n"), "j");
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  EXPECT_EQ(std::get<TcpCheck>(tcp->task.health->check).port, "db");
  absl::StatusOr<JobSpec> http =
      ParseJobSpec(Minimal("  ports: [web]\n  health: {http: {port: web}}\n"), "j");
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(std::get<HttpCheck>(http->task.health->check).path, "/");
}

TEST(ParseJobSpecTest, ConstraintOps) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(Minimal(R"(  constraints:
    - {host_label: zone, op: not_in, values: [c]}
    - {host_label: ssd, op: exists}
    - {host_label: maintenance, op: not_exists}
    - {host_label: load, op: lt, value: -0.5}
)"),
                                              "j");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->task.constraints.size(), 4u);
  EXPECT_EQ(std::get<LabelConstraint>(spec->task.constraints[1]).op, ConstraintOp::kExists);
  EXPECT_EQ(std::get<LabelConstraint>(spec->task.constraints[3]).number, -0.5);
}

TEST(ParseJobSpecTest, CommentsAnchorsAndBlockScalars) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(R"(
name: j   # trailing comment
instances: 3
task:
  command: |
    set -e
    ./run
  resources: &res {cpu: 1, memory: 1Gi}
instance_overrides:
  2: {resources: *res, user: nobody}
)",
                                              "j");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->task.command, "set -e\n./run\n");
  EXPECT_EQ(spec->instance_overrides.at(2).task.resources, Resources::Of(1000, kGi));
}

TEST(ParseJobSpecTest, PriorityBounds) {
  EXPECT_TRUE(ParseJobSpec(Minimal("priority: -1000000\n"), "j").ok());
  EXPECT_TRUE(ParseJobSpec(Minimal("priority: 1000000\n"), "j").ok());
  EXPECT_THAT(std::string(ParseJobSpec(Minimal("priority: 1000001\n"), "j").status().message()),
              HasSubstr("j:6:11: priority: 1000001 is out of range; expected a whole number from "
                        "-1000000 to 1000000"));
}

TEST(JobTypeNames, RoundTripAndUnknownNames) {
  for (JobType t : {JobType::kBatch, JobType::kService, JobType::kStateful, JobType::kDaemon}) {
    EXPECT_EQ(JobTypeFromName(JobTypeName(t)), t);
  }
  EXPECT_EQ(JobTypeFromName("cron"), std::nullopt);
  EXPECT_EQ(JobTypeFromName("Batch"), std::nullopt);
}

}  // namespace
}  // namespace paceline
