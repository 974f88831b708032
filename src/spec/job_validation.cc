// ValidateJobSpec: the semantic rules of job specs (see spec_validation.h and docs/specs.md).

#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "spec/field_path.h"
#include "spec/spec_validation.h"
#include "spec/validation_internal.h"

namespace paceline {
namespace {

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
  if (spec.instances == 0) {
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
}

void CheckHealth(ErrorSink& sink, const TaskSpec& task, const std::string& base) {
  if (!task.health) return;
  const HealthSpec& h = *task.health;
  auto check_port = [&](const std::string& kind, const std::string& port) {
    std::string p = ChildPath(ChildPath(base, kind), "port");
    bool known = false;
    for (const std::string& q : task.ports) known |= q == port;
    if (port.empty()) {
      sink.Add(p, "is required; expected the name of one of the task's ports");
    } else if (!known) {
      sink.Add(p,
               absl::StrCat("'", absl::CHexEscape(port), "' is not one of the task's ports (",
                            task.ports.empty() ? "it has none" : absl::StrJoin(task.ports, ", "),
                            "); expected a name listed in task.ports"),
               {"task.ports"});
    }
  };
  if (const auto* c = std::get_if<CommandCheck>(&h.check)) {
    if (c->command.empty()) sink.Add(ChildPath(base, "command"), "is empty; expected a command");
    CheckText(sink, ChildPath(base, "command"), c->command, TextKind::kText);
  } else if (const auto* http = std::get_if<HttpCheck>(&h.check)) {
    check_port("http", http->port);
    std::string p = ChildPath(ChildPath(base, "http"), "path");
    if (http->path.empty() || http->path[0] != '/') {
      sink.Add(p, "expected an absolute URL path starting with '/', such as /healthz");
    } else {
      CheckText(sink, p, http->path, TextKind::kLine);
    }
  } else if (const auto* tcp = std::get_if<TcpCheck>(&h.check)) {
    check_port("tcp", tcp->port);
  }
  if (h.interval <= absl::ZeroDuration()) {
    sink.Add(ChildPath(base, "interval"), "is 0; expected a positive duration such as 10s");
  }
  if (h.timeout <= absl::ZeroDuration()) {
    sink.Add(ChildPath(base, "timeout"), "is 0; expected a positive duration such as 5s");
  }
  if (h.failures == 0) sink.Add(ChildPath(base, "failures"), "is 0; expected at least 1");
}

void CheckConstraint(ErrorSink& sink, const JobSpec& spec, const Constraint& c,
                     const std::string& p) {
  if (const auto* m = std::get_if<MaxPerHostConstraint>(&c)) {
    if (m->max_per_host == 0) {
      sink.Add(ChildPath(p, "max_per_host"), "is 0; expected at least 1");
    }
    if (!m->task_label.empty() && !spec.labels.contains(m->task_label)) {
      sink.Add(ChildPath(p, "task_label"),
               absl::StrCat("'", absl::CHexEscape(m->task_label),
                            "' is not one of the job's labels; expected a key of labels"),
               {"labels"});
    }
    return;
  }
  const auto& l = std::get<LabelConstraint>(c);
  if (!validation_internal::IsLabelKey(l.label)) {
    sink.Add(ChildPath(p, "host_label"),
             "expected a host label name (letters, digits, '.', '_', '-', '/')");
  }
  std::string values = ChildPath(p, "values");
  std::string op = ChildPath(p, "op");
  switch (l.op) {
    case ConstraintOp::kIn:
    case ConstraintOp::kNotIn:
      if (l.values.empty()) {
        sink.Add(values,
                 absl::StrCat("is required for op ", ConstraintOpName(l.op),
                              "; expected a list of at least one value"),
                 {op});
      }
      break;
    case ConstraintOp::kExists:
    case ConstraintOp::kNotExists:
      if (!l.values.empty()) {
        sink.Add(
            values,
            absl::StrCat("are given but op ", ConstraintOpName(l.op), " takes none; remove values"),
            {op});
      }
      break;
    case ConstraintOp::kGt:
    case ConstraintOp::kLt:
      if (!std::isfinite(l.number)) {
        sink.Add(ChildPath(p, "value"), "expected a finite number", {op});
      }
      break;
  }
  for (size_t i = 0; i < l.values.size(); ++i) {
    CheckText(sink, IndexPath(values, i), l.values[i], TextKind::kLine);
  }
}

// A file of $PACELINE_SECRETS: one plain name, no directory.
bool IsSecretFileName(absl::string_view f) {
  if (f.empty() || f.size() > 255 || f == "." || f == "..") return false;
  for (char c : f) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

void CheckSecretRefs(ErrorSink& sink, const TaskSpec& t) {
  if (t.secrets.size() > kMaxSecretRefs) {
    sink.Add("task.secrets", absl::StrCat("lists ", t.secrets.size(), " secrets; at most ",
                                          kMaxSecretRefs, " are allowed"));
  }
  std::set<std::string> envs, files;
  for (size_t i = 0; i < t.secrets.size(); ++i) {
    const SecretRef& s = t.secrets[i];
    std::string p = IndexPath("task.secrets", i);
    if (!IsSecretName(s.name)) {
      sink.Add(ChildPath(p, "name"),
               absl::StrCat("'", absl::CHexEscape(s.name),
                            "' is not a secret name; expected 1 to 63 characters from a-z, 0-9, "
                            "'.', '_' and '-', starting with a letter or a digit"));
    }
    if (s.env.empty() == s.file.empty()) {
      sink.Add(p,
               "expected exactly one of env (a variable) and file (a file under "
               "$PACELINE_SECRETS)");
      continue;
    }
    if (!s.env.empty()) {
      std::string e = ChildPath(p, "env");
      if (!validation_internal::IsEnvName(s.env)) {
        sink.Add(e,
                 absl::StrCat("'", absl::CHexEscape(s.env),
                              "' is not a valid variable name; expected [A-Za-z_][A-Za-z0-9_]*"));
      } else if (absl::StartsWith(s.env, "PACELINE_")) {
        sink.Add(e, "uses the reserved prefix PACELINE_ (set by the agent); choose another name");
      } else if (t.env.contains(s.env)) {
        sink.Add(e, absl::StrCat("'", s.env, "' is also set in task.env; a variable has one value"),
                 {"task.env"});
      } else if (!envs.insert(s.env).second) {
        sink.Add(e, absl::StrCat("'", s.env, "' is given twice; each secret needs its own"));
      }
    } else {
      std::string f = ChildPath(p, "file");
      if (!IsSecretFileName(s.file)) {
        sink.Add(f, absl::StrCat("'", absl::CHexEscape(s.file),
                                 "' is not a file name; expected 1 to 255 characters from "
                                 "A-Z, a-z, 0-9, '.', '_' and '-' (no directory)"));
      } else if (!files.insert(s.file).second) {
        sink.Add(f, absl::StrCat("'", s.file, "' is given twice; each secret needs its own"));
      }
    }
  }
}

void CheckTask(ErrorSink& sink, const JobSpec& spec) {
  const TaskSpec& t = spec.task;
  if (t.command.empty() && !t.container) {
    sink.Add("task.command", "is required; expected the command line to run");
  }
  validation_internal::CheckContainer(sink, spec);
  CheckText(sink, "task.command", t.command, TextKind::kText);
  validation_internal::CheckTaskResources(sink, "task.resources", t.resources);
  std::set<std::string> seen;
  for (size_t i = 0; i < t.gpu_models.size(); ++i) {
    std::string p = IndexPath("task.gpu_models", i);
    if (t.gpu_models[i].empty()) sink.Add(p, "is empty; expected a GPU model name");
    if (!seen.insert(t.gpu_models[i]).second) sink.Add(p, "is listed twice");
    CheckText(sink, p, t.gpu_models[i], TextKind::kLine);
  }
  if (!t.gpu_models.empty() && t.resources.gpu_milli() == 0) {
    sink.Add("task.gpu_models", "are given but the task asks for no gpu; set task.resources.gpu",
             {"task.resources.gpu"});
  }
  seen.clear();
  for (size_t i = 0; i < t.ports.size(); ++i) {
    std::string p = IndexPath("task.ports", i);
    if (!validation_internal::IsPortName(t.ports[i])) {
      sink.Add(p, absl::StrCat("'", absl::CHexEscape(t.ports[i]),
                               "' is not a valid port name; expected [a-z][a-z0-9_]*, at most "
                               "63 characters"));
    } else if (!seen.insert(t.ports[i]).second) {
      sink.Add(p, absl::StrCat("'", t.ports[i], "' is listed twice; port names are unique"));
    }
  }
  validation_internal::CheckEnv(sink, "task.env", t.env);
  CheckSecretRefs(sink, t);
  if (t.restart.policy == RestartPolicy::kNever && t.restart.max_failures > 0) {
    sink.Add("task.restart.max_failures",
             "has no effect with policy never; expected policy: on-failure",
             {"task.restart.policy"});
  }
  if (t.restart.max_backoff < t.restart.initial_backoff) {
    sink.Add("task.restart.max_backoff",
             absl::StrCat(FormatDurationShort(t.restart.max_backoff), " is below initial_backoff (",
                          FormatDurationShort(t.restart.initial_backoff),
                          "); expected max_backoff >= initial_backoff"),
             {"task.restart.initial_backoff"});
  }
  CheckHealth(sink, t, "task.health");
  for (size_t i = 0; i < t.constraints.size(); ++i) {
    CheckConstraint(sink, spec, t.constraints[i], IndexPath("task.constraints", i));
  }
  if (t.volume) {
    if (spec.type != JobType::kStateful) {
      sink.Add("task.volume",
               absl::StrCat("is given on a ", JobTypeName(spec.type),
                            " job; only stateful jobs own volumes (set type: stateful)"),
               {"type"});
    }
    if (t.volume->size_bytes <= 0 || t.volume->size_bytes == kUnlimited) {
      sink.Add("task.volume.size", "expected a positive, finite size such as 10Gi");
    }
  }
  if (t.kill_grace < absl::ZeroDuration()) sink.Add("task.kill_grace", "is negative");
  if (t.duration < absl::ZeroDuration()) sink.Add("task.duration", "is negative");
  CheckText(sink, "task.exclusive", t.exclusive, TextKind::kLine);
  CheckText(sink, "task.user", t.user, TextKind::kLine);
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
    }
    if (!o.command && !o.resources && o.env.empty() && !o.controller) {
      sink.Add(p, "changes nothing; expected at least one of command, resources, env, controller");
    }
    if (o.command) {
      if (o.command->empty()) sink.Add(ChildPath(p, "command"), "is empty; expected a command");
      CheckText(sink, ChildPath(p, "command"), *o.command, TextKind::kText);
    }
    if (o.resources) {
      validation_internal::CheckTaskResources(sink, ChildPath(p, "resources"), *o.resources);
    }
    validation_internal::CheckEnv(sink, ChildPath(p, "env"), o.env);
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
  CheckTask(sink, spec);
  if (spec.type == JobType::kBatch && !(spec.update == UpdateSpec{})) {
    sink.Add("update",
             "is given on a batch job; rolling updates apply to service, stateful and daemon "
             "jobs, remove update",
             {"type"});
  }
  if (spec.update.batch_size == 0) sink.Add("update.batch_size", "is 0; expected at least 1");
  CheckOverrides(sink, spec);
  return sink.Take();
}

}  // namespace paceline
