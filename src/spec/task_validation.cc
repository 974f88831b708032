// The rules of one task (the job's template, a role's task, an instance override's task), part
// of ValidateJobSpec. Each check names fields under a prefix: "task", "roles[1].task",
// "instance_overrides.3".

#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/units.h"
#include "spec/field_path.h"
#include "spec/validation_internal.h"

namespace paceline::validation_internal {
namespace {

// A health or readiness check (`field`: "health" or "readiness").
void CheckProbe(ErrorSink& sink, const TaskSpec& task, const std::optional<HealthSpec>& probe,
                const std::string& prefix, absl::string_view field) {
  if (!probe) return;
  const HealthSpec& h = *probe;
  const std::string base = ChildPath(prefix, field);
  const std::string ports = ChildPath(prefix, "ports");
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
                            "); expected a name listed in ", ports),
               {ports});
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
  if (!IsLabelKey(l.label)) {
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

void CheckSecretRefs(ErrorSink& sink, const TaskSpec& t, const std::string& prefix) {
  const std::string secrets = ChildPath(prefix, "secrets");
  const std::string env = ChildPath(prefix, "env");
  if (t.secrets.size() > kMaxSecretRefs) {
    sink.Add(secrets, absl::StrCat("lists ", t.secrets.size(), " secrets; at most ", kMaxSecretRefs,
                                   " are allowed"));
  }
  std::set<std::string> envs, files;
  for (size_t i = 0; i < t.secrets.size(); ++i) {
    const SecretRef& s = t.secrets[i];
    std::string p = IndexPath(secrets, i);
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
      if (!IsEnvName(s.env)) {
        sink.Add(e,
                 absl::StrCat("'", absl::CHexEscape(s.env),
                              "' is not a valid variable name; expected [A-Za-z_][A-Za-z0-9_]*"));
      } else if (absl::StartsWith(s.env, "PACELINE_")) {
        sink.Add(e, "uses the reserved prefix PACELINE_ (set by the agent); choose another name");
      } else if (t.env.contains(s.env)) {
        sink.Add(e,
                 absl::StrCat("'", s.env, "' is also set in ", env, "; a variable has one value"),
                 {env});
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

}  // namespace

void CheckTask(ErrorSink& sink, const JobSpec& spec, const TaskSpec& t, const std::string& prefix) {
  // `key` may be a dotted path below the task ("restart.policy").
  auto at = [&](absl::string_view key) { return absl::StrCat(prefix, ".", key); };
  if (t.command.empty() && !t.container) {
    sink.Add(at("command"), "is required; expected the command line to run", {at("container")});
  }
  CheckContainer(sink, spec, t, prefix);
  CheckText(sink, at("command"), t.command, TextKind::kText);
  CheckTaskResources(sink, at("resources"), t.resources);
  std::set<std::string> seen;
  for (size_t i = 0; i < t.gpu_models.size(); ++i) {
    std::string p = IndexPath(at("gpu_models"), i);
    if (t.gpu_models[i].empty()) sink.Add(p, "is empty; expected a GPU model name");
    if (!seen.insert(t.gpu_models[i]).second) sink.Add(p, "is listed twice");
    CheckText(sink, p, t.gpu_models[i], TextKind::kLine);
  }
  if (!t.gpu_models.empty() && t.resources.gpu_milli() == 0) {
    sink.Add(at("gpu_models"),
             absl::StrCat("are given but the task asks for no gpu; set ", at("resources.gpu")),
             {at("resources.gpu")});
  }
  seen.clear();
  for (size_t i = 0; i < t.ports.size(); ++i) {
    std::string p = IndexPath(at("ports"), i);
    if (!IsPortName(t.ports[i])) {
      sink.Add(p, absl::StrCat("'", absl::CHexEscape(t.ports[i]),
                               "' is not a valid port name; expected [a-z][a-z0-9_]*, at most "
                               "63 characters"));
    } else if (!seen.insert(t.ports[i]).second) {
      sink.Add(p, absl::StrCat("'", t.ports[i], "' is listed twice; port names are unique"));
    }
  }
  CheckEnv(sink, at("env"), t.env);
  CheckSecretRefs(sink, t, prefix);
  if (t.restart.policy == RestartPolicy::kNever && t.restart.max_failures > 0) {
    sink.Add(at("restart.max_failures"),
             "has no effect with policy never; expected policy: on-failure",
             {at("restart.policy")});
  }
  if (t.restart.max_backoff < t.restart.initial_backoff) {
    sink.Add(at("restart.max_backoff"),
             absl::StrCat(FormatDurationShort(t.restart.max_backoff), " is below initial_backoff (",
                          FormatDurationShort(t.restart.initial_backoff),
                          "); expected max_backoff >= initial_backoff"),
             {at("restart.initial_backoff")});
  }
  CheckProbe(sink, t, t.health, prefix, "health");
  CheckProbe(sink, t, t.readiness, prefix, "readiness");
  if (!HasEndpoints(spec.type)) {
    // Only instances that clients find take traffic that a check could gate or drain.
    for (absl::string_view field : {"readiness", "deregistration_delay"}) {
      bool given =
          field == "readiness" ? t.readiness.has_value() : t.deregistration_delay.has_value();
      if (given) {
        sink.Add(at(field),
                 absl::StrCat("is given on a ", JobTypeName(spec.type),
                              " job; only service and stateful jobs have endpoints that clients "
                              "find (set type: service, or use health)"),
                 {"type"});
      }
    }
  }
  if (t.deregistration_delay && *t.deregistration_delay < absl::ZeroDuration()) {
    sink.Add(at("deregistration_delay"), "is negative");
  }
  for (size_t i = 0; i < t.constraints.size(); ++i) {
    CheckConstraint(sink, spec, t.constraints[i], IndexPath(at("constraints"), i));
  }
  if (t.volume) {
    if (spec.type != JobType::kStateful) {
      sink.Add(at("volume"),
               absl::StrCat("is given on a ", JobTypeName(spec.type),
                            " job; only stateful jobs own volumes (set type: stateful)"),
               {"type"});
    }
    if (t.volume->size_bytes <= 0 || t.volume->size_bytes == kUnlimited) {
      sink.Add(at("volume.size"), "expected a positive, finite size such as 10Gi");
    }
  }
  if (t.kill_grace < absl::ZeroDuration()) sink.Add(at("kill_grace"), "is negative");
  if (t.duration < absl::ZeroDuration()) sink.Add(at("duration"), "is negative");
  CheckText(sink, at("exclusive"), t.exclusive, TextKind::kLine);
  CheckText(sink, at("user"), t.user, TextKind::kLine);
}

bool TaskFieldDiffers(const TaskSpec& a, const TaskSpec& b, absl::string_view key) {
  if (key == "command") return a.command != b.command;
  if (key == "resources") return a.resources != b.resources;
  if (key == "gpu_models") return a.gpu_models != b.gpu_models;
  if (key == "ports") return a.ports != b.ports;
  if (key == "env") return a.env != b.env;
  if (key == "secrets") return a.secrets != b.secrets;
  if (key == "restart") return a.restart != b.restart;
  if (key == "health") return a.health != b.health;
  if (key == "readiness") return a.readiness != b.readiness;
  if (key == "deregistration_delay") return a.deregistration_delay != b.deregistration_delay;
  if (key == "constraints") return a.constraints != b.constraints;
  if (key == "volume") return a.volume != b.volume;
  if (key == "container") return a.container != b.container;
  if (key == "kill_grace") return a.kill_grace != b.kill_grace;
  if (key == "exclusive") return a.exclusive != b.exclusive;
  if (key == "controller") return a.controller != b.controller;
  if (key == "user") return a.user != b.user;
  if (key == "identity") return a.identity != b.identity;
  if (key == "duration") return a.duration != b.duration;
  return true;  // not a field of the task: a rule of the whole task, always reported
}

void CheckDerivedTask(ErrorSink& sink, const JobSpec& spec, const TaskSpec& t, const TaskSpec& base,
                      const std::string& prefix) {
  ErrorSink mine;
  CheckTask(mine, spec, t, prefix);
  // The first field below `prefix` of a path within it ("resources" of
  // "roles[0].task.resources.cpu"); "" for a path outside it.
  auto field_of = [&](absl::string_view path) -> absl::string_view {
    if (!absl::ConsumePrefix(&path, prefix) || !absl::ConsumePrefix(&path, ".")) return "";
    return path.substr(0, path.find_first_of(".["));
  };
  for (FieldError& e : mine.Take()) {
    bool own = TaskFieldDiffers(t, base, field_of(e.path));
    for (const std::string& r : e.related) {
      absl::string_view f = field_of(r);
      own |= !f.empty() && TaskFieldDiffers(t, base, f);
    }
    if (own) sink.Add(std::move(e));
  }
}

}  // namespace paceline::validation_internal
