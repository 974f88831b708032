// ParseJobSpec: the YAML form of a job spec (see yaml_spec.h, docs/specs.md). The task
// template is read by task_spec_yaml.cc.

#include <algorithm>
#include <array>
#include <exception>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spec/embedded_spec.h"
#include "spec/field_path.h"
#include "spec/job_yaml_internal.h"
#include "spec/schedule_internal.h"
#include "spec/spec_validation.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using yaml_internal::Diagnostics;
using yaml_internal::Field;
using yaml_internal::MapReader;
using yaml_internal::ReadCount;
using yaml_internal::ReadInto;

constexpr std::array<absl::string_view, 16> kJobKeys = {
    "name",      "description", "owner",    "type",
    "instances", "priority",    "labels",   "sla",
    "task",      "update",      "gang",     "completion",
    "roles",     "depends_on",  "schedule", "instance_overrides"};
constexpr std::array<absl::string_view, 4> kJobTypes = {"batch", "service", "stateful", "daemon"};
constexpr std::array<absl::string_view, 7> kSlaKeys = {
    "preemptible",           "revocable",        "max_running_instances",
    "min_running_instances", "max_running_time", "max_unavailable_instances",
    "expected_running_time"};
constexpr std::array<absl::string_view, 5> kUpdateKeys = {
    "batch_size", "max_failures", "rollback_on_failure", "in_place", "min_healthy_time"};
constexpr std::array<absl::string_view, 4> kGangKeys = {"rendezvous", "port", "restart",
                                                        "max_restarts"};
constexpr std::array<absl::string_view, 4> kRendezvous = {"none", "pytorch", "mpi", "tensorflow"};
constexpr std::array<absl::string_view, 2> kGangRestarts = {"instance", "gang"};
constexpr std::array<absl::string_view, 2> kCompletions = {"all", "instance-0"};
constexpr std::array<absl::string_view, 3> kRoleKeys = {"name", "instances", "task"};
constexpr std::array<absl::string_view, 2> kDependencyKeys = {"job", "condition"};
constexpr std::array<absl::string_view, 3> kConditions = {"succeeded", "failed", "finished"};

SlaSpec ReadSla(const Field& f, Diagnostics& diag) {
  SlaSpec s;
  MapReader m(f, kSlaKeys, "expected a map such as {preemptible: true, max_running_instances: 10}",
              diag);
  ReadInto(m.Get("preemptible"), s.preemptible, yaml_internal::ReadBool, diag);
  ReadInto(m.Get("revocable"), s.revocable, yaml_internal::ReadBool, diag);
  ReadCount(m.Get("max_running_instances"), s.max_running_instances, diag, kMaxInstances);
  ReadCount(m.Get("min_running_instances"), s.min_running_instances, diag, kMaxInstances);
  ReadInto(m.Get("max_running_time"), s.max_running_time, yaml_internal::ReadDuration, diag);
  ReadInto(m.Get("expected_running_time"), s.expected_running_time, yaml_internal::ReadDuration,
           diag);
  ReadCount(m.Get("max_unavailable_instances"), s.max_unavailable_instances, diag, kMaxInstances);
  return s;
}

UpdateSpec ReadUpdate(const Field& f, Diagnostics& diag) {
  UpdateSpec u;
  MapReader m(f, kUpdateKeys, "expected a map such as {batch_size: 2, rollback_on_failure: true}",
              diag);
  ReadCount(m.Get("batch_size"), u.batch_size, diag, kMaxInstances);
  ReadCount(m.Get("max_failures"), u.max_failures, diag);
  ReadInto(m.Get("rollback_on_failure"), u.rollback_on_failure, yaml_internal::ReadBool, diag);
  ReadInto(m.Get("in_place"), u.in_place, yaml_internal::ReadBool, diag);
  ReadInto(m.Get("min_healthy_time"), u.min_healthy_time, yaml_internal::ReadDuration, diag);
  return u;
}

// "0", "17": an instance index; no sign, no leading zeros.
std::optional<uint32_t> ParseIndex(absl::string_view text) {
  if (text.empty() || text.size() > 10 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > yaml_internal::kMaxCount) return std::nullopt;
  return static_cast<uint32_t>(v);
}

GangSpec ReadGang(const Field& f, Diagnostics& diag) {
  GangSpec g;
  MapReader m(f, kGangKeys, "expected a map such as {rendezvous: pytorch, max_restarts: 3}", diag);
  if (auto r = m.Get("rendezvous")) {
    if (auto v = yaml_internal::ReadEnum(*r, kRendezvous, diag)) {
      g.rendezvous = static_cast<Rendezvous>(*v);
    }
  }
  ReadInto(m.Get("port"), g.port, yaml_internal::ReadString, diag);
  g.restart = g.rendezvous == Rendezvous::kNone ? GangRestart::kInstance : GangRestart::kGang;
  if (auto r = m.Get("restart")) {
    if (auto v = yaml_internal::ReadEnum(*r, kGangRestarts, diag)) {
      g.restart = static_cast<GangRestart>(*v);
    }
  }
  ReadCount(m.Get("max_restarts"), g.max_restarts, diag);
  return g;
}

// Each role's task is the template with the role's fields applied.
void ReadRoles(const Field& f, JobSpec& spec, Diagnostics& diag) {
  auto items = yaml_internal::ReadSequence(
      f, "expected a list of roles such as [{name: launcher, instances: 1}, {name: worker, ...}]",
      diag);
  if (items && items->empty()) {
    diag.Error(f.loc, f.path, "is empty; expected at least one role, or leave roles out");
  }
  for (const Field& item : items.value_or(std::vector<Field>{})) {
    RoleSpec& role = spec.roles.emplace_back();
    role.task = spec.task;
    MapReader m(item, kRoleKeys,
                "expected a map such as {name: worker, instances: 4, task: {command: ./work}}",
                diag);
    if (!m.ok()) continue;
    ReadInto(m.Require("name", "expected a role name such as worker"), role.name,
             yaml_internal::ReadString, diag);
    ReadCount(m.Require("instances", "expected the number of the role's instances, such as 4"),
              role.instances, diag, kMaxInstances);
    if (auto t = m.Get("task")) role.task = yaml_internal::ReadTaskOver(*t, spec.task, diag);
  }
}

// depends_on: [{job: 12, condition: succeeded}, ...]; the condition defaults to succeeded. The
// validator checks each job reference, duplicates and the count.
void ReadDependencies(const Field& f, JobSpec& spec, Diagnostics& diag) {
  auto items = yaml_internal::ReadSequence(
      f, "expected a list such as [{job: 12, condition: succeeded}, {job: nightly-etl}]", diag);
  for (const Field& item : items.value_or(std::vector<Field>{})) {
    JobDependency& dep = spec.depends_on.emplace_back();
    MapReader m(item, kDependencyKeys,
                "expected a map such as {job: nightly-etl, condition: succeeded}", diag);
    if (!m.ok()) continue;
    ReadInto(m.Require("job", "expected a job id such as 12 or a job name such as nightly-etl"),
             dep.job, yaml_internal::ReadString, diag);
    if (auto c = m.Get("condition")) {
      if (auto v = yaml_internal::ReadEnum(*c, kConditions, diag)) {
        dep.condition = static_cast<DependencyCondition>(*v);
      }
    }
  }
}

// Each override's task is its instance's base task (its role's, or the template) with the
// override's fields applied.
void ReadOverrides(const Field& f, JobSpec& spec, Diagnostics& diag) {
  MapReader m(f, "expected a map from instance index to overrides, such as {0: {command: ...}}",
              diag);
  for (const auto& [key, field] : m.entries()) {
    std::optional<uint32_t> index = ParseIndex(key);
    if (!index) {
      diag.Error(field.loc, field.path,
                 absl::StrCat(yaml_internal::Quote(key),
                              " is not an instance index; expected a whole number such as 0"));
      continue;
    }
    if (field.node.IsMap() && field.node.size() == 0) {
      diag.Error(field.loc, field.path,
                 "changes nothing; expected at least one field of the task, such as command");
      continue;
    }
    spec.instance_overrides[*index].task =
        yaml_internal::ReadTaskOver(field, spec.BaseTaskFor(*index), diag);
  }
}

// An override of an existing instance whose fields all equal its base's is not kept, so that
// every spec reads and prints back the same (and specs stored before overrides held whole
// tasks, where such overrides were valid, still read).
void DropIdleOverrides(JobSpec& spec) {
  for (auto it = spec.instance_overrides.begin(); it != spec.instance_overrides.end();) {
    if (it->first < spec.instances && it->second.task == spec.BaseTaskFor(it->first)) {
      it = spec.instance_overrides.erase(it);
    } else {
      ++it;
    }
  }
}

// pytorch and tensorflow meet on a port of every member: added to each task that lacks it.
void AddRendezvousPort(JobSpec& spec) {
  if (spec.gang.rendezvous != Rendezvous::kPyTorch &&
      spec.gang.rendezvous != Rendezvous::kTensorFlow) {
    return;
  }
  auto add = [&](TaskSpec& t) {
    if (std::find(t.ports.begin(), t.ports.end(), spec.gang.port) == t.ports.end()) {
      t.ports.push_back(spec.gang.port);
    }
  };
  add(spec.task);
  for (RoleSpec& role : spec.roles) add(role.task);
  for (auto& [index, o] : spec.instance_overrides) add(o.task);
}

JobSpec ReadJob(const Field& root, Diagnostics& diag, absl::string_view default_command = "") {
  JobSpec spec;
  MapReader top(root, kJobKeys, "expected a job spec map", diag);
  ReadInto(top.Require("name", "expected a job name such as nightly-etl"), spec.name,
           yaml_internal::ReadString, diag);
  ReadInto(top.Get("description"), spec.description, yaml_internal::ReadString, diag);
  ReadInto(top.Get("owner"), spec.owner, yaml_internal::ReadString, diag);
  bool type_known = true;
  if (auto f = top.Get("type")) {
    std::optional<size_t> t = yaml_internal::ReadEnum(*f, kJobTypes, diag);
    type_known = t.has_value();
    if (t) spec.type = static_cast<JobType>(*t);
  }
  if (spec.type == JobType::kDaemon) {
    if (auto f = top.Get("instances")) {
      diag.Error(f->loc, f->path,
                 "is set on a daemon job; daemon jobs run one instance on every eligible host, "
                 "remove instances");
    }
  } else if (type_known && top.Has("roles")) {
    ReadCount(top.Get("instances"), spec.instances, diag, kMaxInstances);
  } else if (type_known) {
    ReadCount(top.Require("instances", absl::StrCat("a ", JobTypeName(spec.type),
                                                    " job needs a number of instances such as 10")),
              spec.instances, diag, kMaxInstances);
  }
  if (auto f = top.Get("priority")) {
    if (auto v = yaml_internal::ReadInt(*f, kMinPriority, kMaxPriority, diag)) {
      spec.priority = static_cast<int32_t>(*v);
    }
  }
  ReadInto(
      top.Get("labels"), spec.labels,
      [](const Field& f, Diagnostics& d) {
        return yaml_internal::ReadStringMap(f, "expected a map of strings such as {team: ads}", d);
      },
      diag);
  if (auto f = top.Get("sla")) spec.sla = ReadSla(*f, diag);
  if (auto f = top.Require("task", "expected a map with command and resources")) {
    spec.task = yaml_internal::ReadTask(*f, diag, default_command);
  }
  if (auto f = top.Get("update")) spec.update = ReadUpdate(*f, diag);
  if (auto f = top.Get("gang")) spec.gang = ReadGang(*f, diag);
  if (auto f = top.Get("completion")) {
    if (auto v = yaml_internal::ReadEnum(*f, kCompletions, diag)) {
      spec.completion = static_cast<Completion>(*v);
    }
  }
  if (auto f = top.Get("roles")) {
    ReadRoles(*f, spec, diag);
    if (!top.Has("instances") && spec.type != JobType::kDaemon) {
      uint64_t sum = 0;
      for (const RoleSpec& role : spec.roles) sum += role.instances;
      spec.instances = static_cast<uint32_t>(std::min<uint64_t>(sum, kMaxInstances + 1));
    }
  }
  if (auto f = top.Get("instance_overrides")) ReadOverrides(*f, spec, diag);
  if (auto f = top.Get("depends_on")) ReadDependencies(*f, spec, diag);
  if (auto f = top.Get("schedule")) spec.schedule = yaml_internal::ReadSchedule(*f, diag);
  AddRendezvousPort(spec);
  DropIdleOverrides(spec);
  return spec;
}

}  // namespace

absl::StatusOr<JobSpec> ParseJobSpec(absl::string_view yaml_text, absl::string_view file_name) {
  return yaml_internal::ParseSpecDocument<JobSpec>(
      yaml_text, file_name, "job spec",
      [](const Field& f, Diagnostics& diag) { return ReadJob(f, diag); }, ValidateJobSpec);
}

namespace yaml_internal {

JobSpec ReadEmbeddedJobSpec(const Field& f, Diagnostics& diag, absl::string_view default_command) {
  JobSpec spec = ReadJob(f, diag, default_command);
  diag.AddValidationErrors(ValidateJobSpec(spec), f.path);
  return spec;
}

}  // namespace yaml_internal
}  // namespace paceline
