// ValidateJobSpec: the semantic rules of job specs (see spec_validation.h and docs/specs.md).

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "spec/field_path.h"
#include "spec/schedule_internal.h"
#include "spec/spec_validation.h"
#include "spec/validation_internal.h"

namespace paceline {
namespace {

using validation_internal::CheckDerivedTask;
using validation_internal::CheckTask;
using validation_internal::CheckText;
using validation_internal::ErrorSink;
using validation_internal::TextKind;

void CheckName(ErrorSink& sink, const std::string& name) {
  if (name.empty()) {
    sink.Add("name", "is required; expected a job name such as nightly-etl");
  } else if (!validation_internal::IsLabelKey(name) || name.find('/') != std::string::npos) {
    sink.Add("name", absl::StrCat("'", absl::CHexEscape(name.substr(0, kMaxNameLength)),
                                  "' is not a valid job name; expected 1 to ", kMaxNameLength,
                                  " letters, digits, '.', '_' or '-', starting with a letter "
                                  "or digit"));
  }
}

void CheckInstances(ErrorSink& sink, const JobSpec& spec) {
  if (spec.type == JobType::kDaemon) {
    if (spec.instances != 0) {
      sink.Add("instances",
               "is set on a daemon job; daemon jobs run one instance on every eligible host, "
               "remove instances",
               {"type"});
    }
    return;
  }
  if (spec.instances == 0 && spec.roles.empty()) {  // roles: each has its own count
    sink.Add(
        "instances",
        absl::StrCat("is 0; expected at least 1 instance for a ", JobTypeName(spec.type), " job"),
        {"type"});
  } else if (spec.instances > kMaxInstances) {
    sink.Add("instances", absl::StrCat(spec.instances, " exceeds the maximum of ", kMaxInstances));
  }
}

void CheckSla(ErrorSink& sink, const JobSpec& spec) {
  const SlaSpec& sla = spec.sla;
  if (sla.revocable && !sla.preemptible) {
    sink.Add("sla.revocable",
             "a revocable job is always preemptible; expected preemptible: true (or omit it)",
             {"sla.preemptible"});
  }
  if (sla.min_running_instances == 0) {
    sink.Add("sla.min_running_instances", "is 0; expected at least 1 (the gang size)");
  } else if (spec.type != JobType::kDaemon && spec.instances > 0 &&
             sla.min_running_instances > spec.instances) {
    sink.Add("sla.min_running_instances",
             absl::StrCat(sla.min_running_instances, " exceeds instances (", spec.instances,
                          "); expected at most the number of instances"),
             {"instances", "type"});
  }
  if (sla.max_running_instances != 0 && sla.min_running_instances != 0 &&
      sla.max_running_instances < sla.min_running_instances) {
    sink.Add("sla.max_running_instances",
             absl::StrCat(sla.max_running_instances, " is below min_running_instances (",
                          sla.min_running_instances,
                          "), so the gang could never start; expected 0 (no throttle) or >= ",
                          sla.min_running_instances),
             {"sla.min_running_instances"});
  }
  if (sla.expected_running_time < absl::ZeroDuration()) {
    sink.Add("sla.expected_running_time",
             "is negative; expected a duration >= 0 (0 = no estimate)");
  } else if (sla.max_running_time > absl::ZeroDuration() &&
             sla.expected_running_time > sla.max_running_time) {
    sink.Add("sla.expected_running_time",
             absl::StrCat(FormatDurationShort(sla.expected_running_time),
                          " is above max_running_time (", FormatDurationShort(sla.max_running_time),
                          "), the limit at which a task is killed; expected an estimate at most "
                          "the limit"),
             {"sla.max_running_time"});
  }
}

// [a-z0-9][a-z0-9-]*, at most 63 characters: a role's name.
bool IsRoleName(absl::string_view n) {
  if (n.empty() || n.size() > 63 || n.front() == '-') return false;
  for (char c : n) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') return false;
  }
  return true;
}

void CheckRoles(ErrorSink& sink, const JobSpec& spec) {
  if (spec.roles.empty()) return;
  if (spec.type == JobType::kDaemon) {
    sink.Add("roles",
             "are given on a daemon job; daemon instances follow hosts, and all run the task",
             {"type"});
    return;
  }
  std::set<std::string> names;
  uint64_t sum = 0;
  for (size_t i = 0; i < spec.roles.size(); ++i) {
    const RoleSpec& role = spec.roles[i];
    std::string p = IndexPath("roles", i);
    if (!IsRoleName(role.name)) {
      sink.Add(ChildPath(p, "name"),
               absl::StrCat("'", absl::CHexEscape(role.name.substr(0, 64)),
                            "' is not a role name; expected 1 to 63 characters from a-z, 0-9 "
                            "and '-', starting with a letter or a digit, such as worker"));
    } else if (!names.insert(role.name).second) {
      sink.Add(ChildPath(p, "name"),
               absl::StrCat("'", role.name,
                            "' is the name of an earlier role too; role names "
                            "are unique in a job"));
    }
    if (role.instances == 0) {
      sink.Add(ChildPath(p, "instances"), "is 0; expected at least 1 instance in a role");
    }
    sum += role.instances;
    CheckDerivedTask(sink, spec, role.task, spec.task, ChildPath(p, "task"));
  }
  if (sum != spec.instances) {
    std::vector<std::string> counts;
    for (const RoleSpec& role : spec.roles) counts.push_back(absl::StrCat(role.instances));
    sink.Add("instances",
             absl::StrCat(spec.instances, " is not the sum of the roles' instances (",
                          absl::StrJoin(counts, " + "), " = ", sum, "); expected ", sum,
                          ", or leave instances out"),
             {"roles"});
  }
}

void CheckGang(ErrorSink& sink, const JobSpec& spec) {
  const GangSpec& g = spec.gang;
  const uint32_t size = spec.sla.min_running_instances;
  if (g.rendezvous != Rendezvous::kNone && size <= 1) {
    sink.Add("gang.rendezvous",
             absl::StrCat("is ", RendezvousName(g.rendezvous), " on a job that is not a gang (",
                          "sla.min_running_instances is ", size,
                          "); expected sla.min_running_instances of 2 or more, the number of "
                          "members that start and meet together, or no rendezvous"),
             {"sla.min_running_instances", "sla"});
  } else if (g.rendezvous != Rendezvous::kNone && g.restart == GangRestart::kInstance) {
    sink.Add("gang.restart",
             absl::StrCat("is instance with the ", RendezvousName(g.rendezvous),
                          " rendezvous: a member restarted alone would find a world that has "
                          "moved on (its peers, ranks and rendezvous of the last start); "
                          "expected gang, or no gang.restart (gang is the default with a "
                          "rendezvous)"));
  } else if (g.rendezvous == Rendezvous::kNone && g.restart == GangRestart::kGang && size <= 1) {
    sink.Add("gang.restart",
             absl::StrCat("is gang on a job that is not a gang (sla.min_running_instances is ",
                          size, "); expected instance, or sla.min_running_instances of 2 or more"),
             {"sla.min_running_instances", "sla"});
  }
  if (!validation_internal::IsPortName(g.port)) {
    sink.Add("gang.port", absl::StrCat("'", absl::CHexEscape(g.port),
                                       "' is not a valid port name; expected [a-z][a-z0-9_]*, "
                                       "at most 63 characters, such as rendezvous"));
    return;
  }
  if (g.rendezvous != Rendezvous::kPyTorch && g.rendezvous != Rendezvous::kTensorFlow) return;
  auto check = [&](const TaskSpec& t, const std::string& prefix) {
    if (std::find(t.ports.begin(), t.ports.end(), g.port) != t.ports.end()) return;
    std::string p = ChildPath(prefix, "ports");
    sink.Add(
        p,
        absl::StrCat("does not list '", g.port, "', the port of the ", RendezvousName(g.rendezvous),
                     " rendezvous (gang.port); expected it among the task's ports"),
        {"gang.port", "gang"});
  };
  check(spec.task, "task");
  for (size_t i = 0; i < spec.roles.size(); ++i) {
    check(spec.roles[i].task, ChildPath(IndexPath("roles", i), "task"));
  }
  for (const auto& [index, o] : spec.instance_overrides) {
    check(o.task, ChildPath("instance_overrides", absl::StrCat(index)));
  }
}

void CheckOverrides(ErrorSink& sink, const JobSpec& spec) {
  if (spec.instance_overrides.empty()) return;
  if (spec.type == JobType::kDaemon) {
    sink.Add("instance_overrides",
             "are given on a daemon job; daemon instances follow hosts and have no fixed index",
             {"type"});
    return;
  }
  for (const auto& [index, o] : spec.instance_overrides) {
    std::string p = ChildPath("instance_overrides", absl::StrCat(index));
    if (index >= spec.instances && spec.instances > 0) {
      sink.Add(p,
               absl::StrCat("instance ", index, " does not exist; the job has ", spec.instances,
                            " instance", spec.instances == 1 ? "" : "s", " (0..",
                            spec.instances - 1, ")"),
               {"instances"});
      continue;
    }
    const TaskSpec& base = spec.BaseTaskFor(index);
    if (o.task == base) {
      sink.Add(p, absl::StrCat("changes nothing; expected at least one field of the task that "
                               "differs from the ",
                               spec.roles.empty() ? "job's task" : "task of its role"));
      continue;
    }
    CheckDerivedTask(sink, spec, o.task, base, p);
  }
}

// depends_on: not on a daemon job; at most kMaxDependencies, each a positive job id (all digits)
// or a job name, each job once.
void CheckDependencies(ErrorSink& sink, const JobSpec& spec) {
  if (spec.type == JobType::kDaemon && !spec.depends_on.empty()) {
    sink.Add("depends_on",
             "is given on a daemon job; a daemon runs on every host as hosts come "
             "and go, so only batch, service and stateful jobs can wait for others");
  }
  if (spec.depends_on.size() > kMaxDependencies) {
    sink.Add("depends_on", absl::StrCat("has ", spec.depends_on.size(),
                                        " entries; expected at most ", kMaxDependencies));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < spec.depends_on.size(); ++i) {
    const std::string& job = spec.depends_on[i].job;
    std::string p = absl::StrCat(IndexPath("depends_on", i), ".job");
    if (job.empty()) {
      sink.Add(p, "is required; expected a job id such as 12 or a job name such as nightly-etl");
      continue;
    }
    if (std::all_of(job.begin(), job.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      uint64_t id = 0;
      if (job[0] == '0' || !absl::SimpleAtoi(job, &id) || id == 0) {
        sink.Add(p, absl::StrCat("'", job.substr(0, 24),
                                 "' is not a job id; expected a positive whole number without "
                                 "leading zeros, such as 12"));
        continue;
      }
    } else if (!validation_internal::IsLabelKey(job) || job.find('/') != std::string::npos) {
      sink.Add(p, absl::StrCat("'", absl::CHexEscape(job.substr(0, kMaxNameLength)),
                               "' is neither a job id nor a job name; expected a positive id "
                               "such as 12 or a name of letters, digits, '.', '_' or '-'"));
      continue;
    }
    if (!seen.insert(job).second) {
      sink.Add(p, absl::StrCat("'", job, "' is listed twice; expected each job once"));
    }
  }
}

}  // namespace

std::vector<FieldError> ValidateJobSpec(const JobSpec& spec) {
  ErrorSink sink;
  CheckName(sink, spec.name);
  CheckText(sink, "description", spec.description, TextKind::kText);
  CheckText(sink, "owner", spec.owner, TextKind::kLine);
  CheckInstances(sink, spec);
  if (spec.priority < kMinPriority || spec.priority > kMaxPriority) {
    sink.Add("priority", absl::StrCat(spec.priority, " is out of range; expected ", kMinPriority,
                                      " to ", kMaxPriority, " (higher runs first)"));
  }
  for (const auto& [key, value] : spec.labels) {
    std::string p = ChildPath("labels", key);
    if (!validation_internal::IsLabelKey(key)) {
      sink.Add(p, absl::StrCat("is not a valid label key; expected 1 to ", kMaxNameLength,
                               " letters, digits, '.', '_', '-' or '/', starting with a letter "
                               "or digit"));
    }
    CheckText(sink, p, value, TextKind::kLine);
  }
  CheckSla(sink, spec);
  CheckTask(sink, spec, spec.task, "task");
  CheckRoles(sink, spec);
  CheckGang(sink, spec);
  if (spec.completion != Completion::kAllInstances && spec.type != JobType::kBatch) {
    sink.Add("completion",
             absl::StrCat("is ", CompletionName(spec.completion), " on a ", JobTypeName(spec.type),
                          " job; only a batch job completes: expected all, or leave it out"),
             {"type"});
  }
  if (spec.type == JobType::kBatch && !(spec.update == UpdateSpec{})) {
    sink.Add("update",
             "is given on a batch job; rolling updates apply to service, stateful and daemon "
             "jobs, remove update",
             {"type"});
  }
  if (spec.update.batch_size == 0) sink.Add("update.batch_size", "is 0; expected at least 1");
  CheckOverrides(sink, spec);
  CheckDependencies(sink, spec);
  validation_internal::CheckSchedule(sink, spec);
  return sink.Take();
}

}  // namespace paceline
