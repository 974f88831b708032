#pragma once
// JobSpec: what a user asks of a job (the YAML of `paceline job create -f`).
//
// A job has a type, N instances of one task template (TaskSpec) or of a few roles (each with its
// own task), a priority, an SLA, and optional per-instance overrides. Instances share their
// role's TaskSpec: a 100,000-instance job holds one copy of it per role plus the few overrides.
// See docs/specs.md for the YAML form.
//
// Thread-safety: value types.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/resources.h"

namespace paceline {

enum class JobType : uint8_t { kBatch = 0, kService = 1, kStateful = 2, kDaemon = 3 };
absl::string_view JobTypeName(JobType t);
// The inverse of JobTypeName; nullopt for an unknown name.
std::optional<JobType> JobTypeFromName(absl::string_view name);

enum class RestartPolicy : uint8_t { kNever = 0, kOnFailure = 1, kAlways = 2 };
absl::string_view RestartPolicyName(RestartPolicy p);

struct RestartSpec {
  RestartPolicy policy = RestartPolicy::kNever;
  uint32_t max_failures = 0;  // retries after failures (on-failure); 0 = none
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Minutes(5);
  friend bool operator==(const RestartSpec&, const RestartSpec&) = default;
};

// One kind of health check; exactly one is set in a HealthSpec.
struct CommandCheck {
  std::string command;
  friend bool operator==(const CommandCheck&, const CommandCheck&) = default;
};
struct HttpCheck {
  std::string port;  // name of one of the task's ports
  std::string path = "/";
  friend bool operator==(const HttpCheck&, const HttpCheck&) = default;
};
struct TcpCheck {
  std::string port;  // name of one of the task's ports
  friend bool operator==(const TcpCheck&, const TcpCheck&) = default;
};

struct HealthSpec {
  std::variant<CommandCheck, HttpCheck, TcpCheck> check;
  absl::Duration interval = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(5);
  uint32_t failures = 3;  // consecutive failures that make the task unhealthy
  absl::Duration initial_delay = absl::ZeroDuration();
  friend bool operator==(const HealthSpec&, const HealthSpec&) = default;
};

enum class ConstraintOp : uint8_t { kIn, kNotIn, kExists, kNotExists, kGt, kLt };
absl::string_view ConstraintOpName(ConstraintOp op);

// A hard constraint on the host's labels: `host_label op values`.
struct LabelConstraint {
  std::string label;
  ConstraintOp op = ConstraintOp::kIn;
  std::vector<std::string> values;  // in/not_in: >= 1 value; exists/not_exists: none
  double number = 0;                // gt/lt: the bound
  friend bool operator==(const LabelConstraint&, const LabelConstraint&) = default;
};

// Anti-affinity: at most `max_per_host` instances per host, counted per job, or, when
// `task_label` is set, over every task carrying the same value of that job label.
struct MaxPerHostConstraint {
  uint32_t max_per_host = 1;
  std::string task_label;
  friend bool operator==(const MaxPerHostConstraint&, const MaxPerHostConstraint&) = default;
};

using Constraint = std::variant<LabelConstraint, MaxPerHostConstraint>;

struct VolumeSpec {
  int64_t size_bytes = 0;
  friend bool operator==(const VolumeSpec&, const VolumeSpec&) = default;
};

// A task that runs from an OCI image (docs/containers.md): the image's root filesystem, run by
// the host's OCI runtime inside the task's own cgroup, so that resources, logs, ports, health
// checks, the sandbox, the volume and secrets work as for a plain task.
enum class PullPolicy : uint8_t { kIfNotPresent = 0, kAlways = 1, kNever = 2 };
enum class ContainerNetwork : uint8_t { kHost = 0, kNone = 1 };
absl::string_view PullPolicyName(PullPolicy p);
absl::string_view ContainerNetworkName(ContainerNetwork n);

// One mount into the container. `source` is one of:
//   tmpfs            an empty in-memory file system (counted in the task's memory)
//   sandbox[/SUB]    the task's sandbox, or a directory in it (made when missing)
//   volume           the stateful task's volume
//   /HOST/PATH       a host path the agent allows (its config's container_host_paths)
// `target` is an absolute path in the container.
struct ContainerMount {
  std::string source;
  std::string target;
  bool read_only = false;
  friend bool operator==(const ContainerMount&, const ContainerMount&) = default;
};
inline constexpr size_t kMaxContainerMounts = 32;

struct ContainerSpec {
  std::string image;  // a reference (spec/image_ref.h): [REGISTRY/]REPOSITORY[:TAG][@DIGEST]
  PullPolicy pull = PullPolicy::kIfNotPresent;
  // What runs: task.command, when given, as `/bin/sh -c COMMAND` in the container; otherwise
  // the entrypoint and args given here, each replacing the image's Entrypoint / Cmd.
  std::optional<std::vector<std::string>> entrypoint;
  std::optional<std::vector<std::string>> args;
  std::string user;  // "UID[:GID]" or a name in the image's /etc/passwd; "" = the image's
  bool read_only_rootfs = false;
  std::vector<ContainerMount> mounts;
  ContainerNetwork network = ContainerNetwork::kHost;
  // A secret of the pool holding the registry's credentials as "USER:PASSWORD"; "" = none.
  std::string pull_secret;
  friend bool operator==(const ContainerSpec&, const ContainerSpec&) = default;
};

// A secret the task gets (docs/security.md "Secrets"): the secret `name` of the job's pool or
// of the nearest pool above it, as the variable `env` or as the file `file` under the task's
// $PACELINE_SECRETS directory (mode 0400); exactly one of the two.
struct SecretRef {
  std::string name;
  std::string env;
  std::string file;
  friend bool operator==(const SecretRef&, const SecretRef&) = default;
};
inline constexpr size_t kMaxSecretRefs = 32;
inline constexpr size_t kMaxSecretNameLength = 63;
// [a-z0-9][a-z0-9._-]*, at most kMaxSecretNameLength characters: the name of a secret.
bool IsSecretName(absl::string_view name);

struct TaskSpec {
  std::string command;
  Resources resources;
  std::vector<std::string> gpu_models;  // acceptable GPU models; empty = any
  std::vector<std::string> ports;       // dynamic port names, exported as PACELINE_PORT_<NAME>
  std::map<std::string, std::string> env;
  std::vector<SecretRef> secrets;  // names only: values never travel with the spec
  RestartSpec restart;
  std::optional<HealthSpec> health;
  // Gates traffic without restarting (docs/services.md): the instance is in its service's
  // endpoints and DNS only while this passes. Service and stateful jobs only.
  std::optional<HealthSpec> readiness;
  std::vector<Constraint> constraints;
  std::optional<VolumeSpec> volume;        // stateful jobs only
  std::optional<ContainerSpec> container;  // run from an OCI image; unset = a plain process
  absl::Duration kill_grace = absl::Seconds(30);
  // How long a serving instance stays up after leaving its endpoints and DNS before its stop
  // (SIGTERM) begins; unset: kDefaultDeregistrationDelay for service and stateful jobs, 0 for
  // the others (see DeregistrationDelayOf).
  std::optional<absl::Duration> deregistration_delay;
  std::string exclusive;    // only hosts labelled paceline.exclusive=<this>; empty = none
  bool controller = false;  // counts against the pool's controller_limit
  std::string user;         // run as this user; empty = the agent's default task user
  // The task gets a credential scoped to its own job (docs/frameworks.md "Task identity"):
  // read the job and its tasks, scale it, kill its instances. Always on for a controller.
  bool identity = false;
  // Simulated run time, used by `paceline sim` only; zero = runs until killed.
  absl::Duration duration = absl::ZeroDuration();
  friend bool operator==(const TaskSpec&, const TaskSpec&) = default;
};

// One instance's own task (`instance_overrides` in YAML): the task of the instance's role (the
// job's `task` without roles) with the override's fields applied. It holds the whole task, so
// that TaskFor needs no copy and an override may change any field a role may; the YAML form
// lists only what differs from that base (docs/specs.md "Instance overrides"). Build one with
// JobSpec::OverrideTask, after the template and the roles are set.
struct InstanceOverride {
  TaskSpec task;
  friend bool operator==(const InstanceOverride&, const InstanceOverride&) = default;
};

struct SlaSpec {
  bool preemptible = true;
  bool revocable = false;
  uint32_t max_running_instances = 0;                      // 0 = no throttle
  uint32_t min_running_instances = 1;                      // gang size: this many start together
  absl::Duration max_running_time = absl::ZeroDuration();  // 0 = no deadline
  // Each task's expected run time, an estimate at most max_running_time; 0 = none. Backfill
  // (docs/resource-manager.md "Backfill") decides with max_running_time, which is enforced; the
  // estimate predicts when a reserved gang starts and is shown to users.
  absl::Duration expected_running_time = absl::ZeroDuration();
  uint32_t max_unavailable_instances = 1;
  friend bool operator==(const SlaSpec&, const SlaSpec&) = default;
};

// Defaults for rolling updates of services, stateful and daemon jobs.
struct UpdateSpec {
  uint32_t batch_size = 1;
  uint32_t max_failures = 0;
  bool rollback_on_failure = false;
  bool in_place = false;
  absl::Duration min_healthy_time = absl::Seconds(10);
  friend bool operator==(const UpdateSpec&, const UpdateSpec&) = default;
};

// How the members of a gang meet (docs/frameworks.md): the conventions of a framework, written
// into each member's environment and sandbox by the agent from the gang's peers.
//   pytorch     MASTER_ADDR, MASTER_PORT (instance 0's `port`), WORLD_SIZE, RANK, LOCAL_RANK,
//               LOCAL_WORLD_SIZE, GROUP_RANK (torchrun's static rendezvous)
//   mpi         a hostfile (one line per host, `ADDRESS slots=N`), PACELINE_MPI_HOSTFILE
//   tensorflow  TF_CONFIG: the cluster by role ("worker" without roles) and this task's place
enum class Rendezvous : uint8_t { kNone = 0, kPyTorch = 1, kMpi = 2, kTensorFlow = 3 };
absl::string_view RendezvousName(Rendezvous r);
std::optional<Rendezvous> RendezvousFromName(absl::string_view name);

// What happens to a gang when one of its members fails, is preempted or loses its host.
//   instance  only that member is restarted, by its restart policy (the default without a
//             rendezvous)
//   gang      every member is stopped and the gang placed again together, with a new
//             rendezvous, up to `max_restarts` times (the default with a rendezvous)
enum class GangRestart : uint8_t { kInstance = 0, kGang = 1 };
absl::string_view GangRestartName(GangRestart r);

// job.gang: a gang's size stays sla.min_running_instances; this says how it meets and restarts.
struct GangSpec {
  Rendezvous rendezvous = Rendezvous::kNone;
  std::string port = "rendezvous";  // pytorch/tensorflow: the port name the rendezvous uses;
                                    // added to the task's ports when it is not declared
  GangRestart restart = GangRestart::kInstance;
  uint32_t max_restarts = 3;  // gang restarts before the job fails
  friend bool operator==(const GangSpec&, const GangSpec&) = default;
};

// When a batch job is done.
//   all         when every instance has ended (the default)
//   instance-0  when instance 0 ends: its end is the job's, and the other instances are
//               killed (an MPI launcher, a driver)
enum class Completion : uint8_t { kAllInstances = 0, kInstanceZero = 1 };
absl::string_view CompletionName(Completion c);

// A named group of a job's instances with its own task: a launcher and workers, a parameter
// server and workers, a driver and executors. Instances are numbered through the roles in
// their order: the first role's are 0..n-1, the next role's follow.
struct RoleSpec {
  std::string name;  // [a-z0-9][a-z0-9-]*, unique in the job
  uint32_t instances = 0;
  TaskSpec task;  // the job's task with the role's fields applied
  friend bool operator==(const RoleSpec&, const RoleSpec&) = default;
};

// One entry of `depends_on`: the job waits until the job `job` has ended in a state that
// `condition` accepts (docs/specs.md, "Dependencies"). `job` is as written: a positive job id
// ("12") or a job name. The master resolves a name at creation to the newest job of that name in
// the new job's pool and stores the id, so a stored spec holds ids only.
enum class DependencyCondition : uint8_t { kSucceeded = 0, kFailed = 1, kFinished = 2 };
absl::string_view DependencyConditionName(DependencyCondition c);
struct JobDependency {
  std::string job;
  DependencyCondition condition = DependencyCondition::kSucceeded;
  friend bool operator==(const JobDependency&, const JobDependency&) = default;
};
inline constexpr size_t kMaxDependencies = 32;

// A cron job (docs/specs.md "Cron jobs"): the job is a template that never runs itself; at each
// tick of `cron` in `time_zone` the master creates a run of it, a batch job of its own, under
// the policies of Kubernetes' CronJob.
//   allow    runs may overlap
//   forbid   a tick is skipped while an earlier run is still live
//   replace  the live run is killed and the new one starts
enum class ConcurrencyPolicy : uint8_t { kAllow = 0, kForbid = 1, kReplace = 2 };
absl::string_view ConcurrencyPolicyName(ConcurrencyPolicy p);
struct ScheduleSpec {
  std::string cron;               // five fields: minute hour day-of-month month day-of-week
  std::string time_zone = "UTC";  // an IANA time zone name
  ConcurrencyPolicy concurrency = ConcurrencyPolicy::kAllow;
  // A tick not started within this long of its time (no master led, or the clock jumped) is
  // skipped; unset = a missed tick still runs, once, however late.
  std::optional<absl::Duration> starting_deadline;
  uint32_t keep_succeeded = 3;  // finished runs kept, by outcome; older ones are purged
  uint32_t keep_failed = 1;
  bool suspend = false;  // no new runs while true; live runs go on
  friend bool operator==(const ScheduleSpec&, const ScheduleSpec&) = default;
};

struct JobSpec {
  std::string name;
  std::string description;
  std::string owner;
  JobType type = JobType::kBatch;
  uint32_t instances = 0;  // daemon jobs: 0 (one per eligible host)
  int32_t priority = 0;    // higher first
  std::map<std::string, std::string> labels;
  SlaSpec sla;
  TaskSpec task;
  std::map<uint32_t, InstanceOverride> instance_overrides;
  UpdateSpec update;
  GangSpec gang;
  Completion completion = Completion::kAllInstances;
  // Empty: every instance runs `task`. Otherwise `instances` is the sum of the roles'.
  std::vector<RoleSpec> roles;
  // Jobs this one waits for, at most kMaxDependencies, each job once; set at creation only.
  std::vector<JobDependency> depends_on;
  // Set: a cron job (batch only); its runs are jobs made from this spec without `schedule`.
  std::optional<ScheduleSpec> schedule;

  // The role an instance belongs to; nullptr without roles (or past the last role).
  const RoleSpec* RoleOf(uint32_t instance) const;

  // The task an instance has before its override: its role's task, or `task` without roles.
  const TaskSpec& BaseTaskFor(uint32_t instance) const;
  // The effective task of one instance, without a copy: its override's task, else its role's,
  // else `task`. A reference into this spec.
  const TaskSpec& TaskRef(uint32_t instance) const;
  // The same as a copy.
  TaskSpec TaskFor(uint32_t instance) const { return TaskRef(instance); }
  // TaskRef; `scratch` is not written (kept for callers of the former copy-on-override form).
  const TaskSpec& TaskFor(uint32_t instance, TaskSpec& scratch) const;
  // The task of `instance`'s override, made from BaseTaskFor(instance) when it has none. Set
  // `task` and `roles` first: an override does not follow later changes of its base.
  TaskSpec& OverrideTask(uint32_t instance);
  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// Sets the number of instances of a job (a scale: `job update --instances`, a driver changing
// its own job). Without roles, `instances`; with roles, the last role grows or shrinks, so that
// the instances of the other roles keep their numbers and tasks. Overrides are kept (the
// validator refuses one past the new end). INVALID_ARGUMENT, naming the field, for a daemon
// job, 0 or more than kMaxInstances instances, or when the last role would have none left.
absl::Status ResizeInstances(JobSpec& spec, uint32_t instances);

// Whether a job's instances are endpoints that clients find (the endpoints API and DNS):
// service and stateful jobs.
inline bool HasEndpoints(JobType t) { return t == JobType::kService || t == JobType::kStateful; }

// The deregistration delay of a task of a job of type `t`: its own, or the default.
inline constexpr absl::Duration kDefaultDeregistrationDelay = absl::Seconds(3);
inline absl::Duration DeregistrationDelayOf(JobType t, const TaskSpec& task) {
  return task.deregistration_delay.value_or(HasEndpoints(t) ? kDefaultDeregistrationDelay
                                                            : absl::ZeroDuration());
}

// Limits shared by the parser and the API validators.
inline constexpr uint32_t kMaxInstances = 10'000'000;
inline constexpr int32_t kMinPriority = -1'000'000;
inline constexpr int32_t kMaxPriority = 1'000'000;

}  // namespace paceline
