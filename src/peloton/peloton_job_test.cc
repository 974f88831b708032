#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "peloton/peloton.h"
#include "spec/yaml_spec.h"

namespace paceline::peloton {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A job config around `task` (the defaultConfig's body, indented by 2) and `extra` top keys.
std::string JobYaml(const std::string& task, const std::string& extra = "") {
  return absl::StrCat("name: j\ninstancecount: 3\n", extra,
                      "defaultconfig:\n  resource:\n    cpulimit: 1\n    memlimitmb: 64\n", task,
                      "  command:\n    value: run\n");
}

std::string Error(const std::string& yaml) {
  auto r = ConvertJob(yaml, "job.yaml");
  EXPECT_FALSE(r.ok()) << "converted:\n" << (r.ok() ? absl::StrJoin(r->warnings, "\n") : "");
  return std::string(r.status().message());
}

Converted<JobSpec> Ok(const std::string& yaml) {
  auto r = ConvertJob(yaml, "job.yaml");
  EXPECT_TRUE(r.ok()) << r.status() << "\n" << yaml;
  return r.ok() ? *r : Converted<JobSpec>{};
}

TEST(PelotonJobTest, KeysMatchInLowerCamelAndSnakeCase) {
  const std::string lower =
      "name: j\ninstancecount: 2\nsla:\n  priority: 7\n  maximumrunninginstances: 1\n"
      "defaultconfig:\n  resource:\n    cpulimit: 0.5\n    memlimitmb: 32\n"
      "  killgraceperiodseconds: 9\n  command:\n    value: run\n";
  const std::string camel =
      "name: j\ninstanceCount: 2\nsla:\n  priority: 7\n  maximumRunningInstances: 1\n"
      "defaultConfig:\n  resource:\n    cpuLimit: 0.5\n    memLimitMb: 32\n"
      "  killGracePeriodSeconds: 9\n  command:\n    value: run\n";
  const std::string snake =
      "name: j\ninstance_count: 2\nsla:\n  priority: 7\n  maximum_running_instances: 1\n"
      "default_config:\n  resource:\n    cpu_limit: 0.5\n    mem_limit_mb: 32\n"
      "  kill_grace_period_seconds: 9\n  command:\n    value: run\n";
  JobSpec a = Ok(lower).spec;
  EXPECT_EQ(a, Ok(camel).spec);
  EXPECT_EQ(a, Ok(snake).spec);
  EXPECT_EQ(a.instances, 2u);
  EXPECT_EQ(a.priority, 7);
  EXPECT_EQ(a.sla.max_running_instances, 1u);
  EXPECT_FALSE(a.sla.preemptible);  // Peloton's default, not Paceline's
  EXPECT_EQ(a.task.resources, Resources::Of(500, 32 << 20));
  EXPECT_EQ(a.task.kill_grace, absl::Seconds(9));
}

TEST(PelotonJobTest, AKeyGivenTwiceInTwoSpellingsIsAnError) {
  EXPECT_THAT(Error(JobYaml("", "instance_count: 4\n")),
              AllOf(HasSubstr("job.yaml:3:1: instanceCount: duplicate key"),
                    HasSubstr("as 'instance_count' (first at line 2)")));
}

TEST(PelotonJobTest, UnknownKeysAreErrorsWithTheirPlaceAndASuggestion) {
  EXPECT_THAT(Error("name: j\ninstancecont: 2\ndefaultconfig: {}\n"),
              HasSubstr("job.yaml:2:1: instancecont: unknown key 'instancecont' (did you mean "
                        "'instanceCount'?)"));
  EXPECT_THAT(Error(JobYaml("  resource2: {}\n")),
              HasSubstr("defaultConfig.resource2: unknown key"));
}

TEST(PelotonJobTest, UnitsConvertExactlyOrNotAtAll) {
  JobSpec s = Ok(JobYaml("", "")).spec;
  EXPECT_EQ(s.task.resources[Dim::kCpu], 1000);
  auto r =
      Ok("name: j\ninstancecount: 1\ndefaultconfig:\n  resource:\n    cpulimit: 0.25\n"
         "    memlimitmb: 1.5\n    disklimitmb: 0.25\n    gpulimit: 0.5\n"
         "  command:\n    value: run\n");
  EXPECT_EQ(r.spec.task.resources, Resources::Of(250, 3 << 19, 1 << 18, 500));
  EXPECT_THAT(Error("name: j\ninstancecount: 1\ndefaultconfig:\n  resource:\n    cpulimit: "
                    "0.0001\n    memlimitmb: 1\n  command:\n    value: run\n"),
              HasSubstr("cpuLimit: 0.0001 is not a whole number of millicores (0.1)"));
}

TEST(PelotonJobTest, TasksSeePelotonsVariablesAndTheirPortsUnderPelotonsNames) {
  auto r = Ok(JobYaml("  ports:\n  - name: http\n    envname: WEB_PORT\n", "type: 1\n"));
  EXPECT_THAT(r.spec.task.command,
              AllOf(StartsWith("export PELOTON_JOB_ID=\"$PACELINE_JOB_ID\" "),
                    HasSubstr("PELOTON_TASK_ID=\"$PACELINE_JOB_ID-$PACELINE_INSTANCE_ID\""),
                    HasSubstr("MESOS_SANDBOX=\"$HOME\""),
                    HasSubstr("WEB_PORT=\"$PACELINE_PORT_HTTP\"; run")));
  EXPECT_EQ(r.spec.task.ports, std::vector<std::string>{"http"});
  EXPECT_EQ(r.spec.type, JobType::kService);
}

TEST(PelotonJobTest, AFixedPortNeedsAnEnvName) {
  EXPECT_THAT(Error(JobYaml("  ports:\n  - name: http\n    value: 8080\n")),
              HasSubstr("value: 8080 is a fixed port"));
  auto r = Ok(JobYaml("  ports:\n  - name: Web-Port\n    value: 8080\n    envname: P\n"));
  EXPECT_EQ(r.spec.task.ports, std::vector<std::string>{"web_port"});
  EXPECT_THAT(r.warnings, Contains(HasSubstr("becomes 'web_port'")));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("the fixed port 8080 becomes a port that Paceline "
                                             "assigns; the task reads it from P")));
}

TEST(PelotonJobTest, AShellFalseCommandRunsItsValueWithItsArguments) {
  auto r =
      Ok("name: j\ninstancecount: 1\ndefaultconfig:\n  resource:\n    cpulimit: 1\n"
         "    memlimitmb: 8\n  command:\n    shell: false\n    value: /bin/echo\n"
         "    arguments: [echo, \"it's\", plain]\n");
  EXPECT_THAT(r.spec.task.command, HasSubstr("; exec /bin/echo 'it'\\''s' plain"));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("argv[0] 'echo' is not kept")));
}

TEST(PelotonJobTest, InstanceConfigReplacesWholeFieldsAsPelotonDid) {
  const std::string base =
      "name: j\ninstancecount: 3\ndefaultconfig:\n  resource:\n    cpulimit: 1\n"
      "    memlimitmb: 64\n  command:\n    value: run\n    environment:\n      variables:\n"
      "      - {name: A, value: '1'}\n";
  auto r = Ok(base +
              "instanceconfig:\n  1:\n    resource:\n      cpulimit: 2\n"
              "      memlimitmb: 64\n  2:\n    controller: true\n"
              "    command:\n      value: last\n      environment:\n        variables:\n"
              "        - {name: A, value: '1'}\n        - {name: B, value: '2'}\n");
  ASSERT_EQ(r.spec.instance_overrides.size(), 2u);
  const TaskSpec& first = r.spec.instance_overrides.at(1).task;
  EXPECT_EQ(first.resources, Resources::Of(2000, 64 << 20));
  EXPECT_EQ(first.command, r.spec.task.command);
  const TaskSpec& last = r.spec.instance_overrides.at(2).task;
  EXPECT_THAT(last.command, HasSubstr("; last"));
  EXPECT_EQ(last.env, (std::map<std::string, std::string>{{"A", "1"}, {"B", "2"}}));
  EXPECT_TRUE(last.controller);
  // A command without the default's environment drops A for that instance, as in Peloton.
  auto dropped = Ok(base + "instanceconfig:\n  1:\n    command:\n      value: other\n");
  EXPECT_TRUE(dropped.spec.TaskFor(1).env.empty());
  EXPECT_EQ(dropped.spec.TaskFor(0).env, (std::map<std::string, std::string>{{"A", "1"}}));
  std::string printed = PrintJobSpec(dropped.spec);
  EXPECT_THAT(printed, HasSubstr("A: ~"));
  absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(*back, dropped.spec);
}

// An instance's health check, grace period and ports are its own, as in Peloton: the whole merged
// task becomes the instance's override.
TEST(PelotonJobTest, AnInstanceConfigImportsWhole) {
  const std::string base =
      "name: j\ntype: 1\ninstancecount: 3\ndefaultconfig:\n  resource:\n    cpulimit: 1\n"
      "    memlimitmb: 64\n  healthcheck: {enabled: true, type: 1, commandcheck: {command: "
      "'true'}}\n"
      "  command:\n    value: run\n";
  auto r = Ok(base +
              "instanceconfig:\n  1:\n    healthcheck: {enabled: true, type: 1, commandcheck: "
              "{command: 'curl -f localhost'}}\n    killgraceperiodseconds: 5\n"
              "  2:\n    ports:\n    - {name: http, envname: PORT}\n");
  ASSERT_EQ(r.spec.instance_overrides.size(), 2u);
  const TaskSpec& one = r.spec.TaskRef(1);
  ASSERT_TRUE(one.health.has_value());
  EXPECT_THAT(std::get<CommandCheck>(one.health->check).command, HasSubstr("curl -f localhost"));
  EXPECT_EQ(one.kill_grace, absl::Seconds(5));
  EXPECT_EQ(r.spec.TaskRef(0).kill_grace, absl::Seconds(30));
  const TaskSpec& two = r.spec.TaskRef(2);
  EXPECT_EQ(two.ports, std::vector<std::string>{"http"});
  EXPECT_TRUE(r.spec.TaskRef(0).ports.empty());
  std::string printed = PrintJobSpec(r.spec);
  absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(*back, r.spec);
}

TEST(PelotonJobTest, AnEntryTakesItsOwnRevocableAsPelotonsMergeDid) {
  const std::string yaml =
      "name: j\ninstancecount: 2\nsla:\n  preemptible: true\n  revocable: true\n"
      "defaultconfig:\n  revocable: true\n  resource:\n    cpulimit: 1\n    memlimitmb: 8\n"
      "  command:\n    value: run\ninstanceconfig:\n  1:\n    command:\n      value: other\n";
  EXPECT_THAT(Error(yaml), HasSubstr("instanceConfig.1.revocable: Peloton gave this instance its "
                                     "entry's revocable"));
  auto r = Ok(yaml + "    revocable: true\n");
  EXPECT_TRUE(r.spec.sla.revocable);
}

TEST(PelotonJobTest, WhatAnInstanceCannotChangeIsRefusedNamingTheField) {
  EXPECT_THAT(Error(JobYaml("", "instanceconfig:\n  0:\n    labels:\n    - {key: a, value: b}\n")),
              HasSubstr("instanceConfig.0.labels: differs from defaultConfig's, and Paceline "
                        "keeps labels per job"));
  EXPECT_THAT(Error(JobYaml("", "instanceconfig:\n  3:\n    name: x\n")),
              HasSubstr("instance 3 is not below instanceCount (3)"));
}

TEST(PelotonJobTest, CountsPelotonRefusedAreRefused) {
  EXPECT_THAT(Error(JobYaml("", "sla:\n  minimumrunninginstances: 5\n")),
              HasSubstr("sla.minimumRunningInstances: 5 is above instanceCount (3), which "
                        "Peloton refused too"));
  EXPECT_THAT(Error(JobYaml("", "sla:\n  maximumrunninginstances: 4\n")),
              HasSubstr("sla.maximumRunningInstances: 4 is above instanceCount (3)"));
  EXPECT_THAT(Error(JobYaml("", "type: 2\n")), HasSubstr("type: is DAEMON, which Peloton refused"));
  auto gang = Ok(JobYaml("", "sla:\n  minimumrunninginstances: 3\n"));
  EXPECT_EQ(gang.spec.sla.min_running_instances, 3u);
}

TEST(PelotonJobTest, MesosOnlyFieldsAreRefusedSayingWhatToUse) {
  EXPECT_THAT(Error(JobYaml("  container:\n    type: 1\n    docker: {image: debian}\n")),
              HasSubstr("defaultConfig.container: Mesos containers (DOCKER, MESOS) are not "
                        "supported"));
  EXPECT_THAT(Error(JobYaml("  executor: {type: 2}\n")),
              HasSubstr("custom executors (such as Aurora's thermos) are Mesos-only"));
}

TEST(PelotonJobTest, HealthChecksKeepMesosDefaultsAndSayWhatChanged) {
  auto r = Ok(
      JobYaml("  healthcheck:\n    type: 1\n    commandcheck:\n      command: ok\n", "type: 1\n"));
  ASSERT_TRUE(r.spec.task.health.has_value());
  EXPECT_EQ(r.spec.task.health->interval, absl::Seconds(10));
  EXPECT_EQ(r.spec.task.health->timeout, absl::Seconds(20));
  EXPECT_EQ(r.spec.task.health->initial_delay, absl::Seconds(15));
  EXPECT_EQ(r.spec.task.health->failures, 3u);
  EXPECT_THAT(std::get<CommandCheck>(r.spec.task.health->check).command,
              AllOf(StartsWith("export PELOTON_JOB_ID="), HasSubstr("; ok")));
  EXPECT_THAT(r.warnings, Contains(AllOf(StartsWith("job.yaml:9:5: defaultConfig.healthCheck:"),
                                         HasSubstr("enabled is not true"))));
  auto http = Ok(JobYaml(
      "  ports:\n  - {name: http, value: 8080, envname: P}\n  healthcheck:\n    enabled: true\n"
      "    type: HTTP\n    httpcheck: {port: 8080, path: /ready}\n",
      "type: 1\n"));
  EXPECT_EQ(std::get<HttpCheck>(http.spec.task.health->check), (HttpCheck{"http", "/ready"}));
  EXPECT_THAT(Error(JobYaml("  healthcheck:\n    type: 3\n", "type: 1\n")),
              HasSubstr("healthCheck.type: is GRPC"));
  EXPECT_THAT(
      Error(JobYaml("  healthcheck:\n    type: 2\n    httpcheck: {port: 81}\n", "type: 1\n")),
      HasSubstr("httpCheck.port: 81 is not the value of one of the task's ports"));
}

TEST(PelotonJobTest, HostAndTaskConstraintsConvertAndTheRestIsRefused) {
  auto host = [](int kind, int cond, int req, const std::string& key, const std::string& value) {
    return absl::StrCat("{type: 1, labelconstraint: {kind: ", kind, ", condition: ", cond,
                        ", requirement: ", req, ", label: {key: ", key, ", value: ", value, "}}}");
  };
  auto with = [](const std::string& c) {
    return JobYaml(absl::StrCat("  constraint: ", c, "\n"), "labels: [{key: app, value: web}]\n");
  };
  EXPECT_EQ(Ok(with(host(2, 2, 1, "hostname", "h1"))).spec.task.constraints,
            std::vector<Constraint>{(LabelConstraint{"hostname", ConstraintOp::kIn, {"h1"}, 0})});
  EXPECT_EQ(Ok(with(host(2, 2, 0, "zone", "a"))).spec.task.constraints,
            std::vector<Constraint>{(LabelConstraint{"zone", ConstraintOp::kNotIn, {"a"}, 0})});
  EXPECT_EQ(Ok(with(host(1, 2, 0, "app", "web"))).spec.task.constraints,
            std::vector<Constraint>{(MaxPerHostConstraint{1, "app"})});
  EXPECT_EQ(Ok(with(host(1, 1, 3, "app", "web"))).spec.task.constraints,
            std::vector<Constraint>{(MaxPerHostConstraint{3, "app"})});
  EXPECT_EQ(
      Ok(with(absl::StrCat("{type: 3, orconstraint: {constraints: [", host(2, 2, 1, "rack", "a"),
                           ", ", host(2, 3, 0, "rack", "b"), "]}}")))
          .spec.task.constraints,
      std::vector<Constraint>{(LabelConstraint{"rack", ConstraintOp::kIn, {"a", "b"}, 0})});
  EXPECT_THAT(
      Error(with(absl::StrCat("{type: 3, orconstraint: {constraints: [", host(2, 2, 1, "rack", "a"),
                              ", ", host(2, 2, 1, "zone", "b"), "]}}"))),
      HasSubstr("an OR converts only when"));
  EXPECT_THAT(Error(with(host(1, 3, 0, "app", "db"))),
              HasSubstr("asks for tasks to be placed next to other tasks"));
  EXPECT_THAT(Error(with(host(1, 2, 0, "app", "db"))),
              HasSubstr("Paceline counts the tasks that carry the job's own value"));
  EXPECT_THAT(Error(with(host(2, 1, 0, "zone", "a"))), HasSubstr("holds on no host"));
}

TEST(PelotonJobTest, AVolumeMakesAServiceStatefulAndAppearsAtItsPath) {
  auto r = Ok(JobYaml("  volume:\n    containerpath: data\n    sizemb: 16\n", "type: 1\n"));
  EXPECT_EQ(r.spec.type, JobType::kStateful);
  EXPECT_EQ(r.spec.task.volume, (VolumeSpec{16 << 20}));
  EXPECT_THAT(r.spec.task.command, HasSubstr("; ln -sfn \"$PACELINE_VOLUME\" data || exit 1; run"));
  EXPECT_THAT(Error(JobYaml("  volume: {containerpath: /data, sizemb: 1}\n", "type: 1\n")),
              HasSubstr("'/data' leaves the sandbox"));
  EXPECT_THAT(Error(JobYaml("  volume: {sizemb: 1}\n")), HasSubstr("volume: is on a BATCH job"));
}

TEST(PelotonJobTest, WhatIsNotKeptIsSaidWithItsPlace) {
  auto r = Ok(JobYaml("    fdlimit: 10\n",
                      "changelog: {version: 1}\nowningteam: t\nldapgroups: [a, b]\nrespoolid: "
                      "{value: x}\nsla:\n  minimuminstancecount: 2\n"));
  EXPECT_EQ(r.spec.owner, "t");
  EXPECT_EQ(r.spec.labels.at("peloton.ldap-groups"), "a,b");
  const std::vector<std::string> expected = {
      "job.yaml:3:12: changeLog: is not kept",
      "job.yaml:5:13: ldapGroups: are kept as the label peloton.ldap-groups",
      "job.yaml:6:12: respoolID: is not kept",
      "job.yaml:8:25: sla.minimumInstanceCount: is not kept",
  };
  ASSERT_GE(r.warnings.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_THAT(r.warnings[i], StartsWith(expected[i]));
  EXPECT_THAT(r.warnings.back(), HasSubstr("defaultConfig.resource.fdLimit: is not kept"));
}

TEST(PelotonJobTest, NullsAndEmptyListsMeanNotSet) {
  auto r = Ok(JobYaml("  healthcheck: null\n  ports: []\n  container: null\n",
                      "changelog: null\nlabels: []\n"));
  EXPECT_FALSE(r.spec.task.health.has_value());
  EXPECT_TRUE(r.spec.task.ports.empty());
  EXPECT_TRUE(r.warnings.empty()) << absl::StrJoin(r.warnings, "\n");
}

TEST(PelotonJobTest, EnumsAreNumbersOrNames) {
  EXPECT_EQ(Ok(JobYaml("", "type: SERVICE\n")).spec.type, JobType::kService);
  EXPECT_THAT(Error(JobYaml("", "type: SERVICES\n")),
              HasSubstr("type: 'SERVICES' is not valid (did you mean 'SERVICE'?); expected one of: "
                        "0 (BATCH), 1 (SERVICE), 2 (DAEMON)"));
  EXPECT_THAT(Error(JobYaml("", "type: 7\n")), HasSubstr("type: 7 is not a value of this enum"));
}

TEST(PelotonJobTest, ValidationErrorsPointAtThePelotonField) {
  // Paceline refuses a task without memory; the error sits at the resource of the file.
  EXPECT_THAT(Error("name: j\ninstancecount: 1\ndefaultconfig:\n  resource:\n    cpulimit: 1\n"
                    "  command:\n    value: run\n"),
              StartsWith("job.yaml:5:5: task.resources"));
}

}  // namespace
}  // namespace paceline::peloton
