// Each class of job spec error, with its position and message.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kHead = "name: j\ninstances: 2\ntask:\n  command: run\n";  // lines 1-4

// The error of a spec made of kHead, a resources line (line 5) and `rest`.
std::string ErrorOf(absl::string_view rest,
                    absl::string_view resources = "  resources: {cpu: 1, memory: 1Gi}\n") {
  std::string yaml = absl::StrCat(kHead, resources, rest);
  absl::StatusOr<JobSpec> spec = ParseJobSpec(yaml, "j.yaml");
  EXPECT_FALSE(spec.ok()) << yaml;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(JobSpecErrorsTest, UnknownKeyWithHint) {
  EXPECT_EQ(
      ErrorOf("  comand: x\n"),
      "j.yaml:6:3: task.comand: unknown key 'comand' (did you mean 'command'?); expected "
      "one of: command, resources, gpu_models, ports, env, secrets, restart, health, readiness, "
      "constraints, volume, container, kill_grace, exclusive, controller, user, identity, "
      "deregistration_delay, duration");
  EXPECT_THAT(ErrorOf("sla: {max-running-time: 1h}\n"),
              HasSubstr("j.yaml:6:7: sla.max-running-time: unknown key 'max-running-time' (did "
                        "you mean 'max_running_time'?)"));
}

TEST(JobSpecErrorsTest, DuplicateKey) {
  EXPECT_EQ(ErrorOf("  command: again\n"),
            "j.yaml:6:3: task.command: duplicate key 'command' (first at line 4); each key may "
            "appear only once");
  EXPECT_THAT(ErrorOf("labels: {a: x, a: y}\n"),
              HasSubstr("j.yaml:6:16: labels.a: duplicate key 'a' (first at line 6)"));
}

TEST(JobSpecErrorsTest, WrongTypes) {
  EXPECT_THAT(ErrorOf("", "  resources: [1, 1Gi]\n"),
              HasSubstr("j.yaml:5:14: task.resources: is a list; expected a map such as {cpu: 1, "
                        "memory: 2Gi}"));
  EXPECT_THAT(ErrorOf("priority: abc\n"),
              HasSubstr("j.yaml:6:11: priority: 'abc' is not a whole number"));
  EXPECT_THAT(ErrorOf("sla: {preemptible: yes}\n"),
              HasSubstr("j.yaml:6:20: sla.preemptible: 'yes' is not a boolean; expected true or "
                        "false"));
  EXPECT_THAT(ErrorOf("  ports: http\n"),
              HasSubstr("j.yaml:6:10: task.ports: is a single value; expected a list"));
  EXPECT_THAT(ErrorOf("labels: {team: {x: 1}}\n"),
              HasSubstr("j.yaml:6:16: labels.team: is a map; expected a string"));
}

TEST(JobSpecErrorsTest, MissingRequiredFields) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec("owner: me\n", "j.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            "j.yaml:1:1: name: is required; expected a job name such as nightly-etl\n"
            "j.yaml:1:1: instances: is required; a batch job needs a number of instances such as "
            "10\n"
            "j.yaml:1:1: task: is required; expected a map with command and resources");
  EXPECT_THAT(ErrorOf("", "  resources: {cpu: 1}\n"),
              HasSubstr("j.yaml:5:14: task.resources.memory: is required; expected a size such "
                        "as 512Mi or 2Gi"));
  spec =
      ParseJobSpec("name: j\ninstances: 1\ntask: {resources: {cpu: 1, memory: 1Gi}}\n", "j.yaml");
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("j.yaml:3:7: task.command: is required"));
}

TEST(JobSpecErrorsTest, Units) {
  EXPECT_THAT(ErrorOf("", "  resources: {cpu: 1, memory: 2GB}\n"),
              HasSubstr("j.yaml:5:31: task.resources.memory: unknown unit 'GB' in '2GB' (did you "
                        "mean Gi or G?)"));
  EXPECT_THAT(ErrorOf("", "  resources: {cpu: 1, memory: 1Gi, gpu: 1.5}\n"),
              HasSubstr("task.resources.gpu: '1.5' mixes whole devices and a fraction"));
  EXPECT_THAT(ErrorOf("sla: {max_running_time: 2 hours}\n"),
              HasSubstr("j.yaml:6:25: sla.max_running_time: '2 hours' is not a duration"));
  EXPECT_THAT(ErrorOf("  kill_grace: 30\n"), HasSubstr("task.kill_grace: '30' has no unit"));
}

TEST(JobSpecErrorsTest, ImpossibleValues) {
  EXPECT_THAT(ErrorOf("", "  resources: {cpu: 0, memory: 1Gi}\n"),
              HasSubstr("j.yaml:5:20: task.resources.cpu: is 0; every task must ask for some cpu"));
  EXPECT_THAT(ErrorOf("sla: {min_running_instances: 3}\n"),
              HasSubstr("j.yaml:6:30: sla.min_running_instances: 3 exceeds instances (2)"));
  EXPECT_THAT(ErrorOf("sla: {revocable: true, preemptible: false}\n"),
              HasSubstr("sla.revocable: a revocable job is always preemptible"));
  EXPECT_THAT(ErrorOf("instance_overrides:\n  2: {command: x}\n"),
              HasSubstr("j.yaml:7:6: instance_overrides.2: instance 2 does not exist; the job has "
                        "2 instances (0..1)"));
  EXPECT_THAT(ErrorOf("instance_overrides:\n  0: {}\n"),
              HasSubstr("instance_overrides.0: changes nothing"));
  EXPECT_THAT(ErrorOf("  restart: {initial_backoff: 1m, max_backoff: 10s}\n"),
              HasSubstr("task.restart.max_backoff: 10s is below initial_backoff (1m)"));
  EXPECT_THAT(ErrorOf("  env: {PACELINE_X: y, 1BAD: z}\n"),
              HasSubstr("task.env.PACELINE_X: uses the reserved prefix PACELINE_"));
  EXPECT_THAT(ErrorOf("update: {batch_size: 2}\n"),
              HasSubstr("j.yaml:6:9: update: is given on a batch job"));
}

TEST(JobSpecErrorsTest, InstancesByType) {
  absl::StatusOr<JobSpec> zero = ParseJobSpec(
      "name: j\ninstances: 0\ntask: {command: x, resources: {cpu: 1, memory: 1Gi}}\n", "j.yaml");
  EXPECT_EQ(zero.status().message(),
            "j.yaml:2:12: instances: is 0; expected at least 1 instance for a batch job");
  absl::StatusOr<JobSpec> daemon = ParseJobSpec(
      "name: j\ntype: daemon\ninstances: 3\ntask: {command: x, resources: {cpu: 1, memory: 1Gi}}\n",
      "j.yaml");
  EXPECT_EQ(daemon.status().message(),
            "j.yaml:3:12: instances: is set on a daemon job; daemon jobs run one instance on every "
            "eligible host, remove instances");
}

TEST(JobSpecErrorsTest, Ports) {
  EXPECT_THAT(ErrorOf("  ports: [http, Admin, http]\n"),
              HasSubstr("j.yaml:6:17: task.ports[1]: 'Admin' is not a valid port name"));
  EXPECT_THAT(ErrorOf("  ports: [http, Admin, http]\n"),
              HasSubstr("j.yaml:6:24: task.ports[2]: 'http' is listed twice"));
}

TEST(JobSpecErrorsTest, Health) {
  EXPECT_THAT(ErrorOf("  health: {interval: 5s}\n"),
              HasSubstr("j.yaml:6:11: task.health: has no check; expected exactly one of command, "
                        "http, tcp"));
  EXPECT_THAT(ErrorOf("  ports: [a]\n  health: {command: x, tcp: {port: a}}\n"),
              HasSubstr("j.yaml:7:29: task.health.tcp: is a second check"));
  EXPECT_THAT(ErrorOf("  ports: [a]\n  health: {http: {port: b}}\n"),
              HasSubstr("j.yaml:7:25: task.health.http.port: 'b' is not one of the task's ports "
                        "(a)"));
  EXPECT_THAT(ErrorOf("  ports: [a]\n  health: {tcp: {}}\n"),
              HasSubstr("task.health.tcp.port: is required"));
}

TEST(JobSpecErrorsTest, Constraints) {
  std::string e = ErrorOf(R"(  constraints:
    - {host_label: zone, op: within, values: [a]}
    - {host_label: zone, op: in}
    - {host_label: ssd, op: exists, values: [x]}
    - {host_label: cores, op: gt}
    - {host_label: cores, op: gt, value: many}
    - {max_per_host: 0}
    - {max_per_host: 1, task_label: nope}
    - {max_per_host: 1, host_label: zone}
)");
  EXPECT_THAT(e, HasSubstr("j.yaml:7:30: task.constraints[0].op: 'within' is not valid; expected "
                           "one of: in, not_in, exists, not_exists, gt, lt"));
  EXPECT_THAT(e, HasSubstr("j.yaml:8:30: task.constraints[1].values: is required for op in"));
  EXPECT_THAT(e, HasSubstr("j.yaml:9:45: task.constraints[2].values: are given but op exists takes "
                           "none"));
  EXPECT_THAT(e, HasSubstr("j.yaml:10:31: task.constraints[3].value: is required for op gt"));
  EXPECT_THAT(e, HasSubstr("j.yaml:11:42: task.constraints[4].value: 'many' is not a number"));
  EXPECT_THAT(e, HasSubstr("j.yaml:12:22: task.constraints[5].max_per_host: is 0"));
  EXPECT_THAT(e, HasSubstr("j.yaml:13:37: task.constraints[6].task_label: 'nope' is not one of the "
                           "job's labels"));
  EXPECT_THAT(e, HasSubstr("j.yaml:14:37: task.constraints[7].host_label: cannot be combined with "
                           "max_per_host"));
}

TEST(JobSpecErrorsTest, VolumeNeedsStateful) {
  EXPECT_THAT(ErrorOf("  volume: {size: 10Gi}\n"),
              HasSubstr("j.yaml:6:11: task.volume: is given on a batch job; only stateful jobs own "
                        "volumes"));
}

TEST(JobSpecErrorsTest, ReadinessAndDeregistrationNeedEndpoints) {
  // A batch job (the default type) has no endpoints that a readiness check could gate.
  EXPECT_THAT(ErrorOf("  readiness: {command: test -f ready}\n"),
              HasSubstr("j.yaml:6:14: task.readiness: is given on a batch job; only service and "
                        "stateful jobs have endpoints that clients find"));
  EXPECT_THAT(ErrorOf("  deregistration_delay: 5s\n"),
              HasSubstr("j.yaml:6:25: task.deregistration_delay: is given on a batch job"));
  absl::StatusOr<JobSpec> d = ParseJobSpec(
      "name: d\ntype: daemon\ntask:\n  command: run\n  resources: {cpu: 1, memory: 1Gi}\n"
      "  readiness: {command: x}\n",
      "d.yaml");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("task.readiness: is given on a daemon job"));
}

TEST(JobSpecErrorsTest, Readiness) {
  const std::string service = "type: service\n";
  auto error_of = [&](absl::string_view rest) {
    absl::StatusOr<JobSpec> spec = ParseJobSpec(
        absl::StrCat(service, kHead, "  resources: {cpu: 1, memory: 1Gi}\n", rest), "s.yaml");
    EXPECT_FALSE(spec.ok()) << rest;
    return spec.ok() ? std::string() : std::string(spec.status().message());
  };
  EXPECT_THAT(error_of("  ports: [a]\n  readiness: {http: {port: b}}\n"),
              HasSubstr("s.yaml:8:28: task.readiness.http.port: 'b' is not one of the task's "
                        "ports (a)"));
  EXPECT_THAT(error_of("  readiness: {interval: 1s}\n"),
              HasSubstr("s.yaml:7:14: task.readiness: has no check"));
  EXPECT_THAT(error_of("  deregistration_delay: -1s\n"),
              HasSubstr("task.deregistration_delay: '-1s' is negative"));
}

TEST(JobSpecErrorsTest, OverrideErrors) {
  std::string e = ErrorOf(R"(instance_overrides:
  x: {command: a}
  01: {command: b}
  1: {comand: c, resources: {cpu: -1}}
)");
  EXPECT_THAT(e, HasSubstr("j.yaml:7:6: instance_overrides.x: 'x' is not an instance index"));
  EXPECT_THAT(e, HasSubstr("j.yaml:8:7: instance_overrides.01: '01' is not an instance index"));
  EXPECT_THAT(e, HasSubstr("j.yaml:9:7: instance_overrides.1.comand: unknown key 'comand' (did you "
                           "mean 'command'?)"));
  EXPECT_THAT(e, HasSubstr("j.yaml:9:35: instance_overrides.1.resources.cpu: '-1' is negative"));
}

TEST(JobSpecErrorsTest, EveryErrorSortedByPosition) {
  std::string e = ErrorOf("priority: high\nsla: {preemptible: no}\noops: 1\n",
                          "  resources: {cpu: lots, memory: 1Gi}\n");
  std::vector<std::string> lines = absl::StrSplit(e, '\n');
  ASSERT_EQ(lines.size(), 4u) << e;
  EXPECT_THAT(lines[0], HasSubstr("j.yaml:5:"));
  EXPECT_THAT(lines[1], HasSubstr("j.yaml:6:11: priority:"));
  EXPECT_THAT(lines[2], HasSubstr("j.yaml:7:20: sla.preemptible:"));
  EXPECT_THAT(lines[3], HasSubstr("j.yaml:8:1: oops: unknown key"));
  for (const std::string& line : lines) EXPECT_THAT(line, ::testing::StartsWith("j.yaml:"));
}

TEST(JobSpecErrorsTest, NoFollowOnErrors) {
  // An unreadable cpu is reported once: not again as "cpu is 0".
  std::string e = ErrorOf("", "  resources: {cpu: lots, memory: 1Gi}\n");
  EXPECT_THAT(e, HasSubstr("task.resources.cpu: 'lots' is not a number"));
  EXPECT_THAT(e, Not(HasSubstr("is 0")));
  // A misspelt type does not make the job a batch job that then lacks instances.
  absl::StatusOr<JobSpec> spec = ParseJobSpec(
      "name: j\ntype: deamon\ntask: {command: x, resources: {cpu: 1, memory: 1Gi}}\n", "j.yaml");
  EXPECT_EQ(spec.status().message(),
            "j.yaml:2:7: type: 'deamon' is not valid (did you mean 'daemon'?); expected one of: "
            "batch, service, stateful, daemon");
}

TEST(JobSpecErrorsTest, StringsMustBeCleanUtf8) {
  EXPECT_THAT(ErrorOf("owner: \"a\\x01b\"\n"),
              HasSubstr("owner: contains the control character \\x01"));
  std::string bad = absl::StrCat("description: \"", std::string("\xc3\x28"), "\"\n");
  EXPECT_THAT(ErrorOf(bad), HasSubstr("description: is not valid UTF-8"));
  EXPECT_THAT(ErrorOf("name2: x\n"), HasSubstr("unknown key 'name2'"));
}

}  // namespace
}  // namespace paceline
