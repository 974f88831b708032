// Roles, gangs, completion, task identity and overrides of any task field: their YAML, errors
// (each naming the field at its line:column), canonical printing, validation and resizing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "spec/spec_validation.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int64_t kGi = int64_t{1} << 30;

// A launcher and four workers that differ in nearly every field.
constexpr const char* kMpiJob = R"(name: allreduce
type: batch
sla: {min_running_instances: 5}
gang: {rendezvous: mpi}
completion: instance-0
task:
  command: ./worker
  resources: {cpu: 2, memory: 4Gi}
  ports: [ssh]
  env: {MODE: full, DEBUG: "1"}
  health: {tcp: {port: ssh}}
  kill_grace: 10s
roles:
  - name: launcher
    instances: 1
    task:
      command: mpirun --hostfile $PACELINE_MPI_HOSTFILE python3 allreduce.py
      resources: {cpu: 1}
      env: {DEBUG: null, ROLE: launcher}
      health: null
      kill_grace: 1m
      identity: true
      user: nobody
  - name: worker
    instances: 4
    task:
      container: {image: registry.example.com/mpi:4.1}
      constraints: [{max_per_host: 1}]
      restart: {policy: on-failure, max_failures: 2}
instance_overrides:
  3: {resources: {gpu: 1}, gpu_models: [A100], kill_grace: 5s}
)";

absl::StatusOr<JobSpec> Parse(absl::string_view yaml) { return ParseJobSpec(yaml, "j.yaml"); }

std::string ErrorOf(absl::string_view yaml) {
  absl::StatusOr<JobSpec> spec = Parse(yaml);
  EXPECT_FALSE(spec.ok()) << yaml;
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(RolesTest, EachRoleIsTheTemplateWithItsFieldsApplied) {
  absl::StatusOr<JobSpec> spec = Parse(kMpiJob);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->instances, 5u) << "the sum of the roles' instances";
  EXPECT_EQ(spec->gang.rendezvous, Rendezvous::kMpi);
  EXPECT_EQ(spec->gang.restart, GangRestart::kGang) << "the default with a rendezvous";
  EXPECT_EQ(spec->completion, Completion::kInstanceZero);
  ASSERT_EQ(spec->roles.size(), 2u);
  const TaskSpec& launcher = spec->roles[0].task;
  EXPECT_EQ(spec->roles[0].name, "launcher");
  EXPECT_THAT(launcher.command, HasSubstr("mpirun"));
  EXPECT_EQ(launcher.resources, Resources::Of(1000, 4 * kGi)) << "memory from the template";
  EXPECT_EQ(launcher.env,
            (std::map<std::string, std::string>{{"MODE", "full"}, {"ROLE", "launcher"}}));
  EXPECT_FALSE(launcher.health.has_value()) << "health: null removes the template's";
  EXPECT_EQ(launcher.kill_grace, absl::Minutes(1));
  EXPECT_TRUE(launcher.identity);
  EXPECT_EQ(launcher.user, "nobody");
  EXPECT_EQ(launcher.ports, std::vector<std::string>{"ssh"});
  const TaskSpec& worker = spec->roles[1].task;
  EXPECT_EQ(worker.command, "./worker");
  ASSERT_TRUE(worker.container.has_value());
  EXPECT_EQ(worker.container->image, "registry.example.com/mpi:4.1");
  EXPECT_EQ(worker.restart.max_failures, 2u);
  EXPECT_EQ(worker.constraints.size(), 1u);
  EXPECT_EQ(worker.health, spec->task.health);
  EXPECT_EQ(worker.env, spec->task.env);

  // Instances are numbered through the roles; each gets its role's task without a copy.
  EXPECT_EQ(spec->RoleOf(0)->name, "launcher");
  EXPECT_EQ(spec->RoleOf(4)->name, "worker");
  EXPECT_EQ(spec->RoleOf(5), nullptr);
  EXPECT_EQ(&spec->TaskRef(0), &launcher);
  EXPECT_EQ(&spec->TaskRef(1), &worker);
  TaskSpec scratch;
  EXPECT_EQ(&spec->TaskFor(4, scratch), &worker);
  // Instance 3's override applies over its role's task, not the template's.
  const TaskSpec& three = spec->TaskRef(3);
  EXPECT_EQ(three.resources, Resources::Of(2000, 4 * kGi, 0, 1000));
  EXPECT_EQ(three.gpu_models, std::vector<std::string>{"A100"});
  EXPECT_EQ(three.kill_grace, absl::Seconds(5));
  EXPECT_EQ(three.container, worker.container);
  EXPECT_EQ(&spec->BaseTaskFor(3), &worker);
}

TEST(RolesTest, PrintingListsOnlyWhatDiffersAndReadsBackTheSameSpec) {
  absl::StatusOr<JobSpec> spec = Parse(kMpiJob);
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string printed = PrintJobSpec(*spec);
  EXPECT_THAT(printed, HasSubstr(R"(gang:
  rendezvous: mpi
completion: instance-0
roles:
  - name: launcher
    instances: 1
    task:
      command: mpirun --hostfile $PACELINE_MPI_HOSTFILE python3 allreduce.py
      resources: {cpu: 1}
      env:
        DEBUG: ~
        ROLE: launcher
      health: ~
      kill_grace: 1m
      user: nobody
      identity: true
  - name: worker
    instances: 4
    task:
      restart:
        policy: on-failure
        max_failures: 2
      constraints:
        - {max_per_host: 1}
      container:
        image: registry.example.com/mpi:4.1
instance_overrides:
  3:
    resources: {gpu: 1}
    gpu_models: [A100]
    kill_grace: 5s
)"));
  absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(*back, *spec);
  EXPECT_EQ(PrintJobSpec(*back), printed);
  EXPECT_EQ(SummarizeJobSpec(*spec),
            "job allreduce: batch, 5 instances, priority 0, per instance cpu=2 memory=4Gi disk=0 "
            "gpu=0, roles launcher 1 + worker 4, gangs of 5 meeting by mpi, 1 instance override");
}

TEST(RolesTest, AnOverrideMayChangeEveryFieldARoleMay) {
  absl::StatusOr<JobSpec> spec = Parse(R"(name: web
type: service
instances: 3
task:
  command: ./serve
  resources: {cpu: 1, memory: 1Gi}
  ports: [http]
  health: {http: {port: http, path: /healthz}}
  env: {A: "1"}
instance_overrides:
  0:
    health: {command: ./check-primary, interval: 2s}
    kill_grace: 2m
    ports: [http, admin]
    env: {A: null, B: "2"}
    container: {image: app:2}
    secrets: [{name: db-password, env: DB_PASSWORD}]
    controller: true
    identity: true
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const TaskSpec& zero = spec->TaskRef(0);
  ASSERT_TRUE(zero.health.has_value());
  EXPECT_EQ(std::get<CommandCheck>(zero.health->check).command, "./check-primary");
  EXPECT_EQ(zero.health->interval, absl::Seconds(2));
  EXPECT_EQ(zero.kill_grace, absl::Minutes(2));
  EXPECT_EQ(zero.ports, (std::vector<std::string>{"http", "admin"}));
  EXPECT_EQ(zero.env, (std::map<std::string, std::string>{{"B", "2"}}));
  EXPECT_EQ(zero.container->image, "app:2");
  EXPECT_EQ(zero.secrets.size(), 1u);
  EXPECT_TRUE(zero.controller);
  EXPECT_TRUE(zero.identity);
  EXPECT_EQ(&spec->TaskRef(1), &spec->task);
  absl::StatusOr<JobSpec> back = ParseJobSpec(PrintJobSpec(*spec), "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *spec);
}

TEST(GangTest, PyTorchAndTensorFlowAddTheirPortToEveryTask) {
  absl::StatusOr<JobSpec> spec = Parse(R"(name: ddp
instances: 4
sla: {min_running_instances: 4}
gang: {rendezvous: pytorch, max_restarts: 5}
task: {command: python3 train.py, resources: {cpu: 1, memory: 1Gi}, ports: [metrics]}
roles:
  - {name: chief, instances: 1}
  - {name: worker, instances: 3, task: {ports: [debug]}}
instance_overrides:
  3: {ports: []}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->gang.restart, GangRestart::kGang);
  EXPECT_EQ(spec->gang.max_restarts, 5u);
  EXPECT_EQ(spec->task.ports, (std::vector<std::string>{"metrics", "rendezvous"}));
  EXPECT_EQ(spec->roles[0].task, spec->task);
  EXPECT_EQ(spec->roles[1].task.ports, (std::vector<std::string>{"debug", "rendezvous"}));
  EXPECT_EQ(spec->TaskRef(3).ports, std::vector<std::string>{"rendezvous"});
  absl::StatusOr<JobSpec> back = ParseJobSpec(PrintJobSpec(*spec), "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *spec);

  absl::StatusOr<JobSpec> tf = Parse(R"(name: ps
instances: 3
sla: {min_running_instances: 3}
gang: {rendezvous: tensorflow, port: grpc, max_restarts: 2}
task: {command: python3 ps.py, resources: {cpu: 1, memory: 1Gi}, ports: [grpc]}
)");
  ASSERT_TRUE(tf.ok()) << tf.status();
  EXPECT_EQ(tf->task.ports, std::vector<std::string>{"grpc"}) << "declared: not added twice";
  EXPECT_EQ(tf->gang.restart, GangRestart::kGang);
  EXPECT_THAT(PrintJobSpec(*tf), HasSubstr("gang:\n  rendezvous: tensorflow\n  port: grpc\n"));
  // Without a rendezvous a gang restarts by instance, and prints no gang block.
  absl::StatusOr<JobSpec> plain = Parse(
      "name: g\ninstances: 2\nsla: {min_running_instances: 2}\ngang: {restart: instance}\n"
      "task: {command: x, resources: {cpu: 1, memory: 1Gi}}\n");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->gang, GangSpec{});
  EXPECT_THAT(PrintJobSpec(*plain), Not(HasSubstr("gang")));
}

constexpr const char* kTask = "task: {command: run, resources: {cpu: 1, memory: 1Gi}}\n";

TEST(GangTest, ARendezvousOnAJobThatIsNotAGangIsRefusedAtItsPlace) {
  std::string e =
      ErrorOf(absl::StrCat("name: j\ninstances: 4\n", kTask, "gang:\n", "  rendezvous: pytorch\n"));
  EXPECT_THAT(e, HasSubstr("j.yaml:5:15: gang.rendezvous: is pytorch on a job that is not a gang "
                           "(sla.min_running_instances is 1); expected "
                           "sla.min_running_instances of 2 or more"));
  EXPECT_THAT(ErrorOf(absl::StrCat("name: j\ninstances: 4\n", kTask, "gang: {restart: gang}\n")),
              HasSubstr("j.yaml:4:17: gang.restart: is gang on a job that is not a gang"));
  EXPECT_THAT(
      ErrorOf(absl::StrCat("name: j\ninstances: 4\n", kTask, "gang: {rendezvous: horovod}\n")),
      HasSubstr("j.yaml:4:20: gang.rendezvous: 'horovod' is not valid; expected one of: none, "
                "pytorch, mpi, tensorflow"));
  EXPECT_THAT(ErrorOf(absl::StrCat("name: j\ninstances: 4\nsla: {min_running_instances: 4}\n",
                                   kTask, "gang: {rendezvous: mpi, port: Bad}\n")),
              HasSubstr("j.yaml:5:31: gang.port: 'Bad' is not a valid port name"));
  EXPECT_THAT(ErrorOf(absl::StrCat("name: j\ninstances: 4\n", kTask, "gang: {rendevous: mpi}\n")),
              HasSubstr("j.yaml:4:8: gang.rendevous: unknown key 'rendevous' (did you mean "
                        "'rendezvous'?)"));
}

TEST(GangTest, ARendezvousWithMembersRestartedAloneIsRefused) {
  std::string e = ErrorOf(absl::StrCat("name: j\ninstances: 2\nsla: {min_running_instances: 2}\n",
                                       kTask, "gang: {rendezvous: mpi, restart: instance}\n"));
  EXPECT_THAT(e, HasSubstr("gang.restart: is instance with the mpi rendezvous"));
  EXPECT_THAT(e, HasSubstr("expected gang, or no gang.restart"));
}

TEST(CompletionTest, OnlyABatchJobCompletesByInstanceZero) {
  EXPECT_THAT(ErrorOf(absl::StrCat("name: j\ntype: service\ninstances: 2\n", kTask,
                                   "completion: instance-0\n")),
              HasSubstr("j.yaml:5:13: completion: is instance-0 on a service job; only a batch "
                        "job completes: expected all, or leave it out"));
  EXPECT_THAT(ErrorOf(absl::StrCat("name: j\ninstances: 2\n", kTask, "completion: first\n")),
              HasSubstr("j.yaml:4:13: completion: 'first' is not valid; expected one of: all, "
                        "instance-0"));
}

TEST(RolesTest, BadRolesAreRefusedNamingTheField) {
  const std::string head = absl::StrCat("name: j\n", kTask);  // lines 1-2
  EXPECT_THAT(ErrorOf(head + "instances: 4\nroles:\n  - {name: a, instances: 1}\n"
                             "  - {name: b, instances: 2}\n"),
              HasSubstr("j.yaml:3:12: instances: 4 is not the sum of the roles' instances "
                        "(1 + 2 = 3); expected 3, or leave instances out"));
  EXPECT_THAT(ErrorOf(head + "roles:\n  - {name: Launcher, instances: 1}\n"),
              HasSubstr("j.yaml:4:12: roles[0].name: 'Launcher' is not a role name; expected 1 "
                        "to 63 characters from a-z, 0-9 and '-'"));
  EXPECT_THAT(ErrorOf(head + "roles:\n  - {name: w, instances: 1}\n  - {name: w, instances: 1}\n"),
              HasSubstr("j.yaml:5:12: roles[1].name: 'w' is the name of an earlier role too"));
  EXPECT_THAT(
      ErrorOf(head + "roles:\n  - {name: w, instances: 0}\n"),
      HasSubstr("j.yaml:4:26: roles[0].instances: is 0; expected at least 1 instance in a role"));
  EXPECT_THAT(ErrorOf(head + "roles:\n  - {name: w}\n"),
              HasSubstr("j.yaml:4:5: roles[0].instances: is required"));
  EXPECT_THAT(ErrorOf(head + "roles: []\n"),
              HasSubstr("j.yaml:3:8: roles: is empty; expected at least one role"));
  EXPECT_THAT(ErrorOf(head + "roles:\n  - {name: w, instances: 1, task: {comand: x}}\n"),
              HasSubstr("j.yaml:4:36: roles[0].task.comand: unknown key 'comand' (did you mean "
                        "'command'?)"));
  EXPECT_THAT(
      ErrorOf(head + "roles:\n  - {name: w, instances: 1, task: {resources: {cpu: 0}}}\n"),
      HasSubstr("j.yaml:4:53: roles[0].task.resources.cpu: is 0; every task must ask for some "
                "cpu"));
  // A role's health check must probe one of the role's own ports.
  EXPECT_THAT(ErrorOf(head + "roles:\n  - name: w\n    instances: 1\n    task:\n"
                             "      health: {tcp: {port: http}}\n"),
              HasSubstr("j.yaml:7:28: roles[0].task.health.tcp.port: 'http' is not one of the "
                        "task's ports (it has none)"));
  EXPECT_THAT(ErrorOf("name: j\ntype: daemon\n" + std::string(kTask) +
                      "roles:\n  - {name: w, instances: 1}\n"),
              HasSubstr("j.yaml:5:3: roles: are given on a daemon job"));
  // The template's own error is reported once, not again for each role that inherits it.
  std::string e = ErrorOf(
      "name: j\ntask: {command: run, resources: {cpu: 1, memory: 1Gi, gpu: 1.5}}\n"
      "roles:\n  - {name: a, instances: 1}\n  - {name: b, instances: 1, task: {command: b}}\n");
  EXPECT_THAT(e, HasSubstr("task.resources.gpu: "));
  EXPECT_THAT(e, Not(HasSubstr("roles[")));
}

TEST(OverridesTest, ErrorsOfAnOverridesFieldsAreAtTheirPlace) {
  const std::string head = absl::StrCat("name: j\ninstances: 2\n", kTask);  // lines 1-3
  EXPECT_THAT(ErrorOf(head + "instance_overrides:\n  1: {health: {http: {port: web}}}\n"),
              HasSubstr("j.yaml:5:29: instance_overrides.1.health.http.port: 'web' is not one "
                        "of the task's ports (it has none)"));
  EXPECT_THAT(ErrorOf(head + "instance_overrides:\n  1: {kill_grace: soon}\n"),
              HasSubstr("j.yaml:5:19: instance_overrides.1.kill_grace: 'soon'"));
  EXPECT_THAT(ErrorOf(head + "instance_overrides:\n  1: {volume: {size: 1Gi}}\n"),
              HasSubstr("j.yaml:5:15: instance_overrides.1.volume: is given on a batch job"));
  EXPECT_THAT(ErrorOf(head + "instance_overrides:\n  1: {env: {A: [x]}}\n"),
              HasSubstr("j.yaml:5:16: instance_overrides.1.env.A: "));
  EXPECT_THAT(ErrorOf(head + "instance_overrides:\n  1: {}\n"),
              HasSubstr("j.yaml:5:6: instance_overrides.1: changes nothing; expected at least "
                        "one field of the task, such as command"));
  // An override equal to its base (as stored before overrides held whole tasks) is dropped.
  absl::StatusOr<JobSpec> same =
      Parse(head +
            "instance_overrides:\n  1: {command: run, resources: {cpu: 1, memory: 1Gi, "
            "disk: 0, gpu: 0}}\n");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->instance_overrides.empty());
}

TEST(IdentityTest, ATaskAsksForItsCredentialInTheSpec) {
  absl::StatusOr<JobSpec> spec = Parse(
      "name: driver\ninstances: 1\ntask: {command: run, resources: {cpu: 1, memory: 1Gi}, "
      "identity: true}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->task.identity);
  EXPECT_THAT(PrintJobSpec(*spec), HasSubstr("  identity: true\n"));
  EXPECT_THAT(ErrorOf("name: d\ninstances: 1\ntask: {command: run, resources: {cpu: 1, "
                      "memory: 1Gi}, identity: yes}\n"),
              HasSubstr("task.identity: 'yes' is not a boolean"));
}

JobSpec TwoRoles() {
  JobSpec j;
  j.name = "dask";
  j.instances = 5;
  j.task.command = "dask-worker";
  j.task.resources = Resources::Of(1000, kGi);
  j.roles = {RoleSpec{"scheduler", 1, j.task}, RoleSpec{"worker", 4, j.task}};
  j.roles[0].task.command = "dask-scheduler";
  return j;
}

TEST(ResizeInstancesTest, TheLastRoleGrowsAndShrinks) {
  JobSpec j = TwoRoles();
  j.OverrideTask(2).command = "special";
  ASSERT_TRUE(ResizeInstances(j, 9).ok());
  EXPECT_EQ(j.instances, 9u);
  EXPECT_EQ(j.roles[0].instances, 1u);
  EXPECT_EQ(j.roles[1].instances, 8u);
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  EXPECT_EQ(j.RoleOf(0)->name, "scheduler") << "instances of other roles keep their numbers";
  EXPECT_EQ(j.TaskRef(2).command, "special");
  ASSERT_TRUE(ResizeInstances(j, 3).ok());
  EXPECT_EQ(j.roles[1].instances, 2u);
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  absl::Status s = ResizeInstances(j, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("instances: 1 would leave the last role, worker, without "
                                     "instances (the roles before it have 1); expected more "
                                     "than 1"));
  EXPECT_EQ(j.instances, 3u) << "unchanged on error";
  // An override past the new end is the validator's to refuse.
  ASSERT_TRUE(ResizeInstances(j, 2).ok());
  EXPECT_THAT(ValidateJobSpec(j)[0].path, "instance_overrides.2");

  JobSpec plain;
  plain.instances = 3;
  ASSERT_TRUE(ResizeInstances(plain, 7).ok());
  EXPECT_EQ(plain.instances, 7u);
  EXPECT_THAT(ResizeInstances(plain, 0).message(), HasSubstr("instances: 0 is out of range"));
  plain.type = JobType::kDaemon;
  EXPECT_THAT(ResizeInstances(plain, 2).message(), HasSubstr("a daemon job"));
}

TEST(ValidateJobSpecTest, RolesAndGangsBuiltAsStructs) {
  JobSpec j = TwoRoles();
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  j.sla.min_running_instances = 5;
  j.gang.rendezvous = Rendezvous::kPyTorch;
  j.gang.restart = GangRestart::kGang;
  std::vector<FieldError> errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].path, "task.ports");
  EXPECT_EQ(errors[1].path, "roles[0].task.ports");
  EXPECT_THAT(errors[1].message, HasSubstr("does not list 'rendezvous', the port of the pytorch "
                                           "rendezvous (gang.port)"));
  j.task.ports = {"rendezvous"};
  for (RoleSpec& r : j.roles) r.task.ports = {"rendezvous"};
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  j.roles[1].instances = 3;
  errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "instances");
  EXPECT_THAT(errors[0].message, HasSubstr("5 is not the sum of the roles' instances (1 + 3 = 4)"));
}

}  // namespace
}  // namespace paceline
