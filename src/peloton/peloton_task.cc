// Peloton's TaskConfig converted into a TaskSpec (peloton_task_internal.h).

#include <array>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "peloton/peloton_constraint_internal.h"
#include "peloton/peloton_task_internal.h"
#include "spec/field_path.h"

namespace paceline::peloton {
namespace {

using yaml_internal::Quote;

constexpr std::array<absl::string_view, 15> kTaskKeys = {"name",        "labels",
                                                         "resource",    "container",
                                                         "command",     "executor",
                                                         "healthCheck", "ports",
                                                         "constraint",  "restartPolicy",
                                                         "volume",      "preemptionPolicy",
                                                         "controller",  "killGracePeriodSeconds",
                                                         "revocable"};
constexpr std::array<absl::string_view, 5> kTaskResourceKeys = {
    "cpuLimit", "memLimitMb", "diskLimitMb", "fdLimit", "gpuLimit"};
constexpr std::array<absl::string_view, 6> kCommandKeys = {"value",       "shell", "arguments",
                                                           "environment", "uris",  "user"};
constexpr std::array<absl::string_view, 1> kEnvironmentKeys = {"variables"};
constexpr std::array<absl::string_view, 4> kVariableKeys = {"name", "value", "type", "secret"};
constexpr std::array<absl::string_view, 3> kVariableTypes = {"UNKNOWN", "VALUE", "SECRET"};
constexpr std::array<absl::string_view, 8> kHealthKeys = {
    "enabled", "initialIntervalSecs", "intervalSecs", "maxConsecutiveFailures", "timeoutSecs",
    "type",    "commandCheck",        "httpCheck"};
constexpr std::array<absl::string_view, 4> kHealthTypes = {"UNKNOWN", "COMMAND", "HTTP", "GRPC"};
constexpr std::array<absl::string_view, 2> kCommandCheckKeys = {"command", "unshareEnvironments"};
constexpr std::array<absl::string_view, 3> kHttpCheckKeys = {"scheme", "port", "path"};
constexpr std::array<absl::string_view, 3> kPortKeys = {"name", "value", "envName"};
constexpr std::array<absl::string_view, 1> kRestartKeys = {"maxFailures"};
constexpr std::array<absl::string_view, 2> kVolumeKeys = {"containerPath", "sizeMB"};
constexpr std::array<absl::string_view, 2> kPreemptionKeys = {"type", "killOnPreempt"};
constexpr std::array<absl::string_view, 3> kPreemptionTypes = {"TYPE_INVALID", "TYPE_PREEMPTIBLE",
                                                               "TYPE_NON_PREEMPTIBLE"};

// Mesos's defaults for a health check's zero fields, which Peloton left to Mesos.
constexpr int64_t kMesosDelaySeconds = 15;
constexpr int64_t kMesosIntervalSeconds = 10;
constexpr int64_t kMesosTimeoutSeconds = 20;
constexpr int64_t kMesosFailures = 3;
constexpr int64_t kPelotonKillGraceSeconds = 30;
constexpr int64_t kMaxSeconds = int64_t{1} << 31;

std::optional<int64_t> ReadUint(const Field& f, Context& ctx, int64_t max = 0xffffffffLL) {
  return yaml_internal::ReadInt(f, 0, max, ctx.diag);
}

Resources ReadResource(const Field& f, Context& ctx) {
  MapReader m =
      PelotonMap(f, kTaskResourceKeys,
                 "expected a map such as {cpuLimit: 1, memLimitMb: 512, diskLimitMb: 1024}", ctx);
  Resources r;
  struct Dimension {
    absl::string_view key;
    Dim dim;
    int64_t scale;
    absl::string_view unit;
  };
  constexpr std::array<Dimension, 4> kDims = {
      {{"cpuLimit", Dim::kCpu, kMilliPerUnit, "millicores"},
       {"memLimitMb", Dim::kMemory, kMiB, "bytes"},
       {"diskLimitMb", Dim::kDisk, kMiB, "bytes"},
       {"gpuLimit", Dim::kGpu, kMilliPerUnit, "milli-GPUs"}}};
  for (const Dimension& d : kDims) {
    std::optional<Field> v = Present(m, d.key);
    if (!v) continue;
    if (auto n = yaml_internal::ReadNumber(*v, ctx.diag)) {
      if (auto scaled = ScaleExactly(*v, *n, d.scale, d.unit, ctx)) r[d.dim] = *scaled;
    }
  }
  if (std::optional<Field> fd = Present(m, "fdLimit"); fd && ReadUint(*fd, ctx)) {
    ctx.Warn(*fd,
             "is not kept: Peloton never enforced it (it did not reach Mesos), and neither does "
             "Paceline; the task gets the agent's limit of open files");
  }
  return r;
}

struct Port {
  std::string name;      // Paceline's name
  std::string env_name;  // Peloton's envName: exported with the port's number
  int64_t value = 0;     // Peloton's static port, 0 = dynamic
};

std::vector<Port> ReadPorts(const Field& f, Context& ctx) {
  std::vector<Port> ports;
  auto items =
      yaml_internal::ReadSequence(f, "expected a list of {name, value, envName}", ctx.diag);
  if (!items) return ports;
  std::set<std::string> seen;
  for (const Field& item : *items) {
    MapReader m =
        PelotonMap(item, kPortKeys, "expected a map such as {name: http, envName: PORT}", ctx);
    if (!m.ok()) continue;
    Port p;
    std::optional<Field> name = m.Require("name", "expected the port's name, such as http");
    if (!name) continue;
    std::optional<std::string> text = yaml_internal::ReadString(*name, ctx.diag);
    if (!text) continue;
    p.name = absl::AsciiStrToLower(*text);
    for (char& c : p.name) {
      if (c == '-' || c == '.') c = '_';
    }
    if (p.name != *text) {
      ctx.Warn(*name, absl::StrCat("becomes ", Quote(p.name),
                                   ": Paceline's port names are [a-z][a-z0-9_]*; the task reads "
                                   "the port from PACELINE_PORT_",
                                   absl::AsciiStrToUpper(p.name)));
    }
    if (!seen.insert(p.name).second) {
      ctx.diag.Error(name->loc, name->path,
                     absl::StrCat(Quote(p.name), " is listed twice; port names are unique"));
    }
    if (std::optional<Field> env = Present(m, "envName")) {
      if (auto e = yaml_internal::ReadString(*env, ctx.diag)) p.env_name = *e;
    }
    if (std::optional<Field> v = Present(m, "value")) {
      if (auto n = ReadUint(*v, ctx, 65535)) p.value = *n;
      if (p.value != 0 && p.env_name.empty()) {
        ctx.diag.Error(v->loc, v->path,
                       absl::StrCat(p.value,
                                    " is a fixed port, and Paceline assigns every port itself; "
                                    "give the port an envName and have the command listen on "
                                    "it (or on $PACELINE_PORT_",
                                    absl::AsciiStrToUpper(p.name), ")"));
      } else if (p.value != 0) {
        ctx.Warn(*v, absl::StrCat("the fixed port ", p.value,
                                  " becomes a port that Paceline "
                                  "assigns; the task reads it from ",
                                  p.env_name, " as before"));
      }
    }
    ports.push_back(std::move(p));
  }
  return ports;
}

struct Command {
  std::string text;  // the shell command, before Peloton's variables are exported
  std::map<std::string, std::string> env;
  std::string user;
};

void ReadEnvironment(const Field& f, std::map<std::string, std::string>& env, Context& ctx) {
  MapReader m = PelotonMap(f, kEnvironmentKeys,
                           "expected a map such as {variables: [{name: A, value: b}]}", ctx);
  std::optional<Field> vars = Present(m, "variables");
  if (!vars) return;
  auto items = yaml_internal::ReadSequence(*vars, "expected a list of {name, value}", ctx.diag);
  if (!items) return;
  for (const Field& item : *items) {
    MapReader v =
        PelotonMap(item, kVariableKeys, "expected a map such as {name: A, value: b}", ctx);
    if (!v.ok()) continue;
    if (std::optional<Field> type = Present(v, "type")) {
      if (auto t = ReadPelotonEnum(*type, kVariableTypes, ctx); t && *t == 2) {
        ctx.diag.Error(type->loc, type->path,
                       "is SECRET, which Paceline keeps apart from specs: put the value with "
                       "`paceline secret create /POOL/NAME` and name it in the converted spec's "
                       "task.secrets ({name: NAME, env: VARIABLE})");
        continue;
      }
    }
    if (std::optional<Field> secret = Present(v, "secret")) {
      ctx.diag.Error(secret->loc, secret->path,
                     "Mesos secrets are not supported; use Paceline's secrets: `paceline secret "
                     "create /POOL/NAME`, then task.secrets in the converted spec");
      continue;
    }
    std::optional<Field> name = v.Require("name", "expected the variable's name");
    if (!name) continue;
    std::optional<std::string> n = yaml_internal::ReadString(*name, ctx.diag);
    std::string value;
    if (std::optional<Field> val = Present(v, "value")) {
      if (auto s = yaml_internal::ReadString(*val, ctx.diag)) value = *s;
    }
    if (!n) continue;
    if (!env.emplace(*n, value).second) {
      ctx.diag.Error(name->loc, name->path,
                     absl::StrCat(Quote(*n), " is set twice; each variable once"));
    }
  }
}

std::optional<Command> ReadCommand(const Field& f, Context& ctx) {
  MapReader m = PelotonMap(f, kCommandKeys,
                           "expected a map such as {shell: true, value: './run --shard 3'}", ctx);
  if (!m.ok()) return std::nullopt;
  Command c;
  std::optional<Field> value = m.Require("value", "expected the command to run");
  std::optional<std::string> text;
  if (value) text = yaml_internal::ReadString(*value, ctx.diag);
  bool shell = true;  // Mesos's default
  if (std::optional<Field> s = Present(m, "shell")) {
    if (auto b = yaml_internal::ReadBool(*s, ctx.diag)) shell = *b;
  }
  std::vector<std::string> args;
  std::optional<Field> arguments = Present(m, "arguments");
  if (arguments) {
    if (auto a = yaml_internal::ReadStringList(*arguments, ctx.diag)) args = *a;
  }
  if (std::optional<Field> env = Present(m, "environment")) ReadEnvironment(*env, c.env, ctx);
  if (std::optional<Field> uris = Present(m, "uris")) {
    ctx.diag.Error(uris->loc, uris->path,
                   "Paceline does not fetch files for a task; fetch them in the command (for "
                   "example `curl -fsSLO URL && ...`) or install them on the hosts");
  }
  if (std::optional<Field> user = Present(m, "user")) {
    if (auto u = yaml_internal::ReadString(*user, ctx.diag)) c.user = *u;
  }
  if (!text) return std::nullopt;
  if (shell) {
    if (arguments && !args.empty()) {
      ctx.Warn(*arguments,
               "are not kept: with shell true, Mesos ran the value with /bin/sh -c and ignored "
               "the arguments; so does Paceline");
    }
    c.text = *text;
    return c;
  }
  // shell false: Mesos ran the value with the arguments as argv, argv[0] first.
  std::vector<std::string> words = {"exec", ShellQuote(*text)};
  for (size_t i = 1; i < args.size(); ++i) words.push_back(ShellQuote(args[i]));
  if (!args.empty() && args[0] != *text) {
    ctx.Warn(*arguments, absl::StrCat("argv[0] ", Quote(args[0]),
                                      " is not kept: the program sees its own path"));
  }
  c.text = absl::StrJoin(words, " ");
  return c;
}

// The exports that give the task the variables Peloton gave it.
std::string PelotonExports(const std::vector<Port>& ports) {
  std::vector<std::string> vars = {
      "PELOTON_JOB_ID=\"$PACELINE_JOB_ID\"", "PELOTON_INSTANCE_ID=\"$PACELINE_INSTANCE_ID\"",
      "PELOTON_TASK_ID=\"$PACELINE_JOB_ID-$PACELINE_INSTANCE_ID\"", "MESOS_SANDBOX=\"$HOME\""};
  for (const Port& p : ports) {
    if (p.env_name.empty()) continue;
    vars.push_back(
        absl::StrCat(p.env_name, "=\"$PACELINE_PORT_", absl::AsciiStrToUpper(p.name), "\""));
  }
  return absl::StrCat("export ", absl::StrJoin(vars, " "), "; ");
}

std::optional<HealthSpec> ReadHealth(const Field& f, const std::vector<Port>& ports,
                                     const std::string& exports, Context& ctx) {
  MapReader m = PelotonMap(
      f, kHealthKeys, "expected a map such as {type: COMMAND, commandCheck: {command: ...}}", ctx);
  if (!m.ok()) return std::nullopt;
  std::optional<Field> type = m.Require("type", "expected 1 (COMMAND) or 2 (HTTP)");
  std::optional<size_t> kind;
  if (type) kind = ReadPelotonEnum(*type, kHealthTypes, ctx);
  HealthSpec h;
  auto seconds = [&](absl::string_view key, int64_t mesos_default) {
    std::optional<Field> v = Present(m, key);
    std::optional<int64_t> n = v ? ReadUint(*v, ctx, kMaxSeconds) : std::nullopt;
    return absl::Seconds(n && *n > 0 ? *n : mesos_default);
  };
  h.initial_delay = seconds("initialIntervalSecs", kMesosDelaySeconds);
  h.interval = seconds("intervalSecs", kMesosIntervalSeconds);
  h.timeout = seconds("timeoutSecs", kMesosTimeoutSeconds);
  if (std::optional<Field> v = Present(m, "maxConsecutiveFailures")) {
    if (auto n = ReadUint(*v, ctx))
      h.failures = static_cast<uint32_t>(*n > 0 ? *n : kMesosFailures);
  } else {
    h.failures = kMesosFailures;
  }
  bool enabled = false;
  if (std::optional<Field> e = Present(m, "enabled")) {
    if (auto b = yaml_internal::ReadBool(*e, ctx.diag)) enabled = *b;
  }
  if (!kind) return std::nullopt;
  if (*kind == 0) {
    ctx.Warn(*type, "is UNKNOWN: Peloton attached no check to the task, and neither does Paceline");
    return std::nullopt;
  }
  if (*kind == 3) {
    ctx.diag.Error(type->loc, type->path,
                   "is GRPC: Paceline has command, http and tcp checks; use a command check "
                   "such as `grpc_health_probe -addr=localhost:$PORT`");
    return std::nullopt;
  }
  if (!enabled) {
    ctx.Warn(f,
             "enabled is not true: Peloton ran the check without acting on its result; "
             "Paceline acts on it (an instance that fails it is unhealthy and is restarted)");
  }
  if (*kind == 1) {
    std::optional<Field> cc =
        m.Require("commandCheck", "expected {command: ...} for a COMMAND check");
    if (!cc) return std::nullopt;
    MapReader c =
        PelotonMap(*cc, kCommandCheckKeys, "expected a map such as {command: 'curl -f ...'}", ctx);
    if (std::optional<Field> u = Present(c, "unshareEnvironments")) {
      if (auto b = yaml_internal::ReadBool(*u, ctx.diag); b && *b) {
        ctx.diag.Error(u->loc, u->path,
                       "is true, and Paceline runs a check with the task's environment; remove "
                       "it and set the variables the check needs in its command");
      }
    }
    std::optional<Field> cmd = c.Require("command", "expected the command to run");
    if (!cmd) return std::nullopt;
    std::optional<std::string> text = yaml_internal::ReadString(*cmd, ctx.diag);
    if (!text) return std::nullopt;
    if (absl::StripAsciiWhitespace(*text).empty()) {
      ctx.diag.Error(cmd->loc, cmd->path, "is empty; expected the command to run");
      return std::nullopt;
    }
    h.check = CommandCheck{absl::StrCat(exports, *text)};
    return h;
  }
  std::optional<Field> hc =
      m.Require("httpCheck", "expected {port: ..., path: ...} for an HTTP check");
  if (!hc) return std::nullopt;
  MapReader c =
      PelotonMap(*hc, kHttpCheckKeys, "expected a map such as {port: 8080, path: /health}", ctx);
  HttpCheck http;
  if (std::optional<Field> s = Present(c, "scheme")) {
    if (auto text = yaml_internal::ReadString(*s, ctx.diag); text && *text != "http") {
      ctx.diag.Error(s->loc, s->path,
                     absl::StrCat(Quote(*text),
                                  " is not supported; Paceline's http check speaks "
                                  "plain http (use a command check with curl for "
                                  "https)"));
    }
  }
  if (std::optional<Field> p = Present(c, "path")) {
    if (auto text = yaml_internal::ReadString(*p, ctx.diag)) http.path = *text;
  }
  std::optional<Field> port = c.Require("port", "expected the number of one of the task's ports");
  if (!port) return std::nullopt;
  std::optional<int64_t> number = ReadUint(*port, ctx, 65535);
  if (!number) return std::nullopt;
  for (const Port& p : ports) {
    if (p.value == *number) http.port = p.name;
  }
  if (http.port.empty()) {
    ctx.diag.Error(port->loc, port->path,
                   absl::StrCat(*number,
                                " is not the value of one of the task's ports; expected "
                                "the fixed value of a port listed in ports (with its "
                                "envName)"));
    return std::nullopt;
  }
  h.check = http;
  return h;
}

RestartSpec ReadRestart(const Field& f, JobType type, Context& ctx) {
  MapReader m = PelotonMap(f, kRestartKeys, "expected a map such as {maxFailures: 3}", ctx);
  RestartSpec r;
  std::optional<Field> mf = Present(m, "maxFailures");
  if (!mf) return r;
  std::optional<int64_t> n = ReadUint(*mf, ctx, 100);
  if (!n || *n == 0) return r;
  if (type != JobType::kBatch) {
    ctx.Warn(*mf,
             "is not kept: Peloton restarted a service's tasks whatever maxFailures said, "
             "and so does Paceline");
    return r;
  }
  r.policy = RestartPolicy::kOnFailure;
  r.max_failures = static_cast<uint32_t>(*n);
  return r;
}

// The volume's size; `link` gets the command that makes containerPath point at it.
std::optional<VolumeSpec> ReadVolume(const Field& f, std::string& link, Context& ctx) {
  MapReader m =
      PelotonMap(f, kVolumeKeys, "expected a map such as {containerPath: data, sizeMB: 1024}", ctx);
  if (!m.ok()) return std::nullopt;
  VolumeSpec v;
  if (std::optional<Field> size = m.Require("sizeMB", "expected the volume's size in MB")) {
    if (auto n = ReadUint(*size, ctx)) v.size_bytes = *n * kMiB;
  }
  if (std::optional<Field> path = Present(m, "containerPath")) {
    std::optional<std::string> p = yaml_internal::ReadString(*path, ctx.diag);
    if (p && (absl::StartsWith(*p, "/") || absl::StrContains(*p, ".."))) {
      ctx.diag.Error(path->loc, path->path,
                     absl::StrCat(Quote(*p),
                                  " leaves the sandbox; Paceline mounts nothing into "
                                  "a task: expected a path relative to the sandbox "
                                  "(the task also finds the volume in "
                                  "$PACELINE_VOLUME)"));
    } else if (p && !p->empty()) {
      link = absl::StrCat("ln -sfn \"$PACELINE_VOLUME\" ", ShellQuote(*p), " || exit 1; ");
    }
  }
  return v;
}

std::optional<bool> ReadPreemption(const Field& f, Context& ctx) {
  MapReader m =
      PelotonMap(f, kPreemptionKeys, "expected a map such as {type: TYPE_PREEMPTIBLE}", ctx);
  if (std::optional<Field> k = Present(m, "killOnPreempt")) {
    if (auto b = yaml_internal::ReadBool(*k, ctx.diag); b && *b) {
      ctx.diag.Error(k->loc, k->path,
                     "is true, and Paceline always runs a preempted task again; remove it (or "
                     "make the job not preemptible)");
    }
  }
  std::optional<Field> t = Present(m, "type");
  if (!t) return std::nullopt;
  std::optional<size_t> v = ReadPelotonEnum(*t, kPreemptionTypes, ctx);
  if (!v || *v == 0) return std::nullopt;
  return *v == 1;
}

}  // namespace

std::optional<Field> TaskFields::Get(const std::string& key) const {
  auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  return it->second;
}

std::optional<TaskFields> ReadTaskFields(const Field& f, Context& ctx) {
  MapReader m = PelotonMap(f, kTaskKeys, "expected a TaskConfig map (resource, command, ...)", ctx);
  if (!m.ok()) return std::nullopt;
  TaskFields t{f, {}};
  for (absl::string_view key : kTaskKeys) {
    if (std::optional<Field> v = Present(m, key)) t.fields.emplace(std::string(key), *v);
  }
  return t;
}

TaskFields MergeTask(const TaskFields& base, const TaskFields& entry) {
  TaskFields merged = base;
  merged.where = entry.where;
  for (const std::string key : {"controller", "revocable"}) merged.fields.erase(key);
  for (const auto& [key, field] : entry.fields) {
    const bool zero =
        field.node.IsScalar() && ((key == "killGracePeriodSeconds" && field.node.Scalar() == "0") ||
                                  (key == "name" && field.node.Scalar().empty()));
    if (!zero) merged.fields.insert_or_assign(key, field);
  }
  return merged;
}

void ReadLabels(const Field& f, std::map<std::string, std::string>& out, Context& ctx) {
  auto items = yaml_internal::ReadSequence(f, "expected a list of {key, value}", ctx.diag);
  if (!items) return;
  for (const Field& item : *items) {
    MapReader m =
        PelotonMap(item, kLabelKeys, "expected a map such as {key: team, value: ads}", ctx);
    if (!m.ok()) continue;
    std::optional<Field> key = m.Require("key", "expected the label's key");
    if (!key) continue;
    std::optional<std::string> k = yaml_internal::ReadString(*key, ctx.diag);
    std::string value;
    if (std::optional<Field> v = Present(m, "value")) {
      if (auto s = yaml_internal::ReadString(*v, ctx.diag)) value = *s;
    }
    if (!k) continue;
    auto [it, inserted] = out.emplace(*k, value);
    if (!inserted && it->second != value) {
      ctx.diag.Error(
          key->loc, key->path,
          absl::StrCat(Quote(*k), " is given twice with different values (", Quote(it->second),
                       " and ", Quote(value), "); Paceline keeps one value per label"));
    }
  }
}

TaskConversion ConvertTask(const TaskFields& t, JobType type,
                           const std::map<std::string, std::string>& job_labels, Context& ctx) {
  TaskConversion out;
  if (auto f = t.Get("labels")) ReadLabels(*f, out.labels, ctx);
  std::map<std::string, std::string> all_labels = job_labels;
  all_labels.insert(out.labels.begin(), out.labels.end());

  if (auto f = t.Get("resource")) {
    out.task.resources = ReadResource(*f, ctx);
  } else {
    ctx.diag.Error(t.where.loc, ChildPath(t.where.path, "resource"),
                   "is required; expected a map such as {cpuLimit: 1, memLimitMb: 512}");
  }
  if (auto f = t.Get("container")) {
    ctx.diag.Error(f->loc, f->path,
                   "Mesos containers (DOCKER, MESOS) are not supported: Paceline runs the "
                   "command on the host as the agent's task user; install what it needs on the "
                   "hosts and remove container");
  }
  if (auto f = t.Get("executor")) {
    ctx.diag.Error(f->loc, f->path,
                   "custom executors (such as Aurora's thermos) are Mesos-only; give the task a "
                   "command instead");
  }
  std::vector<Port> ports;
  if (auto f = t.Get("ports")) ports = ReadPorts(*f, ctx);
  for (const Port& p : ports) out.task.ports.push_back(p.name);
  const std::string exports = PelotonExports(ports);

  std::string link;
  if (auto f = t.Get("volume")) {
    out.task.volume = ReadVolume(*f, link, ctx);
    out.has_volume = true;
  }
  if (auto f = t.Get("command")) {
    if (std::optional<Command> c = ReadCommand(*f, ctx)) {
      out.task.command = absl::StrCat(exports, link, c->text);
      out.task.env = std::move(c->env);
      out.task.user = std::move(c->user);
    }
  } else {
    ctx.diag.Error(t.where.loc, ChildPath(t.where.path, "command"),
                   "is required; expected a map such as {shell: true, value: './run'}");
  }
  if (auto f = t.Get("healthCheck")) out.task.health = ReadHealth(*f, ports, exports, ctx);
  if (auto f = t.Get("constraint")) ConvertConstraint(*f, all_labels, out.task.constraints, ctx);
  if (auto f = t.Get("restartPolicy")) out.task.restart = ReadRestart(*f, type, ctx);
  if (auto f = t.Get("preemptionPolicy")) out.preemptible = ReadPreemption(*f, ctx);
  if (auto f = t.Get("controller")) {
    if (auto b = yaml_internal::ReadBool(*f, ctx.diag)) out.task.controller = *b;
  }
  if (auto f = t.Get("revocable")) {
    if (auto b = yaml_internal::ReadBool(*f, ctx.diag)) out.revocable = *b;
  }
  out.task.kill_grace = absl::Seconds(kPelotonKillGraceSeconds);
  if (auto f = t.Get("killGracePeriodSeconds")) {
    if (auto n = ReadUint(*f, ctx, kMaxSeconds); n && *n > 0)
      out.task.kill_grace = absl::Seconds(*n);
  }
  if (auto f = t.Get("name")) {
    if (auto n = yaml_internal::ReadString(*f, ctx.diag); n && !n->empty()) {
      ctx.Warn(*f, absl::StrCat(Quote(*n), " is not kept: Paceline names a task JOB/INSTANCE"));
    }
  }
  return out;
}

}  // namespace paceline::peloton
