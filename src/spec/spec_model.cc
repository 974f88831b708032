#include "spec/job_spec.h"
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

const TaskSpec& JobSpec::TaskFor(uint32_t instance, TaskSpec& scratch) const {
  if (!instance_overrides.contains(instance)) {
    const RoleSpec* role = roles.empty() ? nullptr : RoleOf(instance);
    return role != nullptr ? role->task : task;
  }
  scratch = TaskFor(instance);
  return scratch;
}

TaskSpec JobSpec::TaskFor(uint32_t instance) const {
  const RoleSpec* role = roles.empty() ? nullptr : RoleOf(instance);
  const TaskSpec& base = role != nullptr ? role->task : task;
  auto it = instance_overrides.find(instance);
  if (it == instance_overrides.end()) return base;
  TaskSpec t = base;
  const InstanceOverride& o = it->second;
  if (o.command) t.command = *o.command;
  if (o.resources) t.resources = *o.resources;
  if (o.controller) t.controller = *o.controller;
  for (const auto& [k, v] : o.env) t.env[k] = v;
  return t;
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
  for (Rendezvous r : {Rendezvous::kNone, Rendezvous::kPyTorch, Rendezvous::kMpi,
                       Rendezvous::kTensorFlow}) {
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

}  // namespace paceline
