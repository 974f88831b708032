#include "spec/job_spec.h"

#include "absl/strings/str_cat.h"
#include "spec/pool_spec.h"

namespace paceline {

Resources PoolSpec::Reservation() const {
  Resources r;
  for (Dim d : kAllDims) r[d] = dim(d).reservation;
  return r;
}

Resources PoolSpec::Limit() const {
  Resources r;
  for (Dim d : kAllDims) r[d] = dim(d).limit;
  return r;
}

absl::string_view PoolTypeName(PoolType t) { return t == PoolType::kStatic ? "static" : "elastic"; }

absl::string_view JobTypeName(JobType t) {
  switch (t) {
    case JobType::kBatch:
      return "batch";
    case JobType::kService:
      return "service";
    case JobType::kStateful:
      return "stateful";
    case JobType::kDaemon:
      return "daemon";
  }
  return "?";
}

std::optional<JobType> JobTypeFromName(absl::string_view name) {
  for (JobType t : {JobType::kBatch, JobType::kService, JobType::kStateful, JobType::kDaemon}) {
    if (JobTypeName(t) == name) return t;
  }
  return std::nullopt;
}

absl::string_view RestartPolicyName(RestartPolicy p) {
  switch (p) {
    case RestartPolicy::kNever:
      return "never";
    case RestartPolicy::kOnFailure:
      return "on-failure";
    case RestartPolicy::kAlways:
      return "always";
  }
  return "?";
}

absl::string_view PullPolicyName(PullPolicy p) {
  switch (p) {
    case PullPolicy::kIfNotPresent:
      return "if-not-present";
    case PullPolicy::kAlways:
      return "always";
    case PullPolicy::kNever:
      return "never";
  }
  return "?";
}

absl::string_view ContainerNetworkName(ContainerNetwork n) {
  return n == ContainerNetwork::kNone ? "none" : "host";
}

absl::string_view ConstraintOpName(ConstraintOp op) {
  switch (op) {
    case ConstraintOp::kIn:
      return "in";
    case ConstraintOp::kNotIn:
      return "not_in";
    case ConstraintOp::kExists:
      return "exists";
    case ConstraintOp::kNotExists:
      return "not_exists";
    case ConstraintOp::kGt:
      return "gt";
    case ConstraintOp::kLt:
      return "lt";
  }
  return "?";
}

const RoleSpec* JobSpec::RoleOf(uint32_t instance) const {
  uint32_t first = 0;
  for (const RoleSpec& role : roles) {
    if (instance - first < role.instances) return &role;
    first += role.instances;
  }
  return nullptr;
}

const TaskSpec& JobSpec::BaseTaskFor(uint32_t instance) const {
  const RoleSpec* role = roles.empty() ? nullptr : RoleOf(instance);
  return role != nullptr ? role->task : task;
}

const TaskSpec& JobSpec::TaskRef(uint32_t instance) const {
  if (!instance_overrides.empty()) {
    auto it = instance_overrides.find(instance);
    if (it != instance_overrides.end()) return it->second.task;
  }
  return BaseTaskFor(instance);
}

const TaskSpec& JobSpec::TaskFor(uint32_t instance, TaskSpec& /*scratch*/) const {
  return TaskRef(instance);
}

TaskSpec& JobSpec::OverrideTask(uint32_t instance) {
  auto it = instance_overrides.find(instance);
  if (it == instance_overrides.end()) {
    it = instance_overrides.emplace(instance, InstanceOverride{BaseTaskFor(instance)}).first;
  }
  return it->second.task;
}

absl::Status ResizeInstances(JobSpec& spec, uint32_t instances) {
  if (spec.type == JobType::kDaemon) {
    return absl::InvalidArgumentError(
        "instances: a daemon job runs one instance on every eligible host; it has no count to "
        "change");
  }
  if (instances == 0 || instances > kMaxInstances) {
    return absl::InvalidArgumentError(
        absl::StrCat("instances: ", instances, " is out of range; expected 1 to ", kMaxInstances));
  }
  if (!spec.roles.empty()) {
    uint64_t others = 0;
    for (size_t i = 0; i + 1 < spec.roles.size(); ++i) others += spec.roles[i].instances;
    RoleSpec& last = spec.roles.back();
    if (instances <= others) {
      return absl::InvalidArgumentError(absl::StrCat(
          "instances: ", instances, " would leave the last role, ", last.name,
          ", without instances (the roles before it have ", others, "); expected more than ",
          others, ": a job grows and shrinks by its last role"));
    }
    last.instances = static_cast<uint32_t>(instances - others);
  }
  spec.instances = instances;
  return absl::OkStatus();
}

absl::string_view RendezvousName(Rendezvous r) {
  switch (r) {
    case Rendezvous::kNone:
      return "none";
    case Rendezvous::kPyTorch:
      return "pytorch";
    case Rendezvous::kMpi:
      return "mpi";
    case Rendezvous::kTensorFlow:
      return "tensorflow";
  }
  return "?";
}

std::optional<Rendezvous> RendezvousFromName(absl::string_view name) {
  for (Rendezvous r :
       {Rendezvous::kNone, Rendezvous::kPyTorch, Rendezvous::kMpi, Rendezvous::kTensorFlow}) {
    if (RendezvousName(r) == name) return r;
  }
  return std::nullopt;
}

absl::string_view GangRestartName(GangRestart r) {
  return r == GangRestart::kGang ? "gang" : "instance";
}

absl::string_view CompletionName(Completion c) {
  return c == Completion::kInstanceZero ? "instance-0" : "all";
}

absl::string_view DependencyConditionName(DependencyCondition c) {
  switch (c) {
    case DependencyCondition::kSucceeded:
      return "succeeded";
    case DependencyCondition::kFailed:
      return "failed";
    case DependencyCondition::kFinished:
      return "finished";
  }
  return "succeeded";
}

absl::string_view ConcurrencyPolicyName(ConcurrencyPolicy p) {
  switch (p) {
    case ConcurrencyPolicy::kAllow:
      return "allow";
    case ConcurrencyPolicy::kForbid:
      return "forbid";
    case ConcurrencyPolicy::kReplace:
      return "replace";
  }
  return "allow";
}

}  // namespace paceline
