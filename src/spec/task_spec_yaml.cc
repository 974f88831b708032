// The task template of a job spec in YAML: `task:` and everything below it.

#include <array>

#include "absl/strings/str_cat.h"
#include "spec/field_path.h"
#include "spec/job_yaml_internal.h"

namespace paceline::yaml_internal {
namespace {

constexpr std::array<absl::string_view, 19> kTaskKeys = {
    "command",    "resources", "gpu_models", "ports",       "env",      "secrets",
    "restart",    "health",    "readiness",  "constraints", "volume",   "container",
    "kill_grace", "exclusive", "controller", "user",        "identity", "deregistration_delay",
    "duration"};
constexpr std::array<absl::string_view, 9> kContainerKeys = {
    "image",  "pull",    "entrypoint", "args", "user", "read_only_rootfs",
    "mounts", "network", "pull_secret"};
constexpr std::array<absl::string_view, 3> kPullPolicies = {"if-not-present", "always", "never"};
constexpr std::array<absl::string_view, 2> kNetworks = {"host", "none"};
constexpr std::array<absl::string_view, 3> kMountKeys = {"source", "target", "read_only"};
constexpr std::array<absl::string_view, 3> kSecretKeys = {"name", "env", "file"};
constexpr std::array<absl::string_view, 4> kResourceKeys = {"cpu", "memory", "disk", "gpu"};
constexpr std::array<absl::string_view, 4> kRestartKeys = {"policy", "max_failures",
                                                           "initial_backoff", "max_backoff"};
constexpr std::array<absl::string_view, 3> kRestartPolicies = {"never", "on-failure", "always"};
constexpr std::array<absl::string_view, 7> kHealthKeys = {
    "command", "http", "tcp", "interval", "timeout", "failures", "initial_delay"};
constexpr std::array<absl::string_view, 3> kCheckKinds = {"command", "http", "tcp"};
constexpr std::array<absl::string_view, 2> kHttpKeys = {"port", "path"};
constexpr std::array<absl::string_view, 1> kTcpKeys = {"port"};
constexpr std::array<absl::string_view, 6> kConstraintKeys = {
    "host_label", "op", "values", "value", "max_per_host", "task_label"};
constexpr std::array<absl::string_view, 6> kOps = {"in",         "not_in", "exists",
                                                   "not_exists", "gt",     "lt"};
constexpr std::array<absl::string_view, 1> kVolumeKeys = {"size"};

std::optional<std::string> PortName(const MapReader& m, Diagnostics& diag) {
  std::optional<Field> f = m.Get("port");
  if (!f) {
    if (m.ok()) {
      diag.Error(m.field().loc, ChildPath(m.field().path, "port"),
                 "is required; expected the name of one of the task's ports");
    }
    return std::nullopt;
  }
  return ReadString(*f, diag);
}

RestartSpec ReadRestart(const Field& f, Diagnostics& diag) {
  RestartSpec r;
  MapReader m(f, kRestartKeys, "expected a map such as {policy: on-failure, max_failures: 3}",
              diag);
  if (auto p = m.Get("policy")) {
    if (auto v = ReadEnum(*p, kRestartPolicies, diag)) r.policy = static_cast<RestartPolicy>(*v);
  }
  ReadCount(m.Get("max_failures"), r.max_failures, diag);
  ReadInto(m.Get("initial_backoff"), r.initial_backoff, ReadDuration, diag);
  ReadInto(m.Get("max_backoff"), r.max_backoff, ReadDuration, diag);
  return r;
}

std::optional<HealthSpec> ReadHealth(const Field& f, Diagnostics& diag) {
  MapReader m(f, kHealthKeys, "expected a map such as {http: {port: http, path: /healthz}}", diag);
  if (!m.ok()) return std::nullopt;
  HealthSpec h;
  int kinds = 0;
  for (const auto& [key, field] : m.entries()) {
    if (std::find(kCheckKinds.begin(), kCheckKinds.end(), key) == kCheckKinds.end()) continue;
    if (++kinds > 1) {
      diag.Error(field.loc, field.path,
                 "is a second check; a health spec has exactly one of command, http, tcp");
      continue;
    }
    if (key == "command") {
      std::optional<std::string> command = ReadString(field, diag);
      h.check = CommandCheck{command.value_or("")};
    } else if (key == "http") {
      MapReader http(field, kHttpKeys, "expected a map such as {port: http, path: /healthz}", diag);
      HttpCheck check;
      check.port = PortName(http, diag).value_or("");
      ReadInto(http.Get("path"), check.path, ReadString, diag);
      h.check = check;
    } else {
      MapReader tcp(field, kTcpKeys, "expected a map such as {port: http}", diag);
      h.check = TcpCheck{PortName(tcp, diag).value_or("")};
    }
  }
  if (kinds == 0) {
    diag.Error(f.loc, f.path, "has no check; expected exactly one of command, http, tcp");
  }
  ReadInto(m.Get("interval"), h.interval, ReadDuration, diag);
  ReadInto(m.Get("timeout"), h.timeout, ReadDuration, diag);
  ReadCount(m.Get("failures"), h.failures, diag);
  ReadInto(m.Get("initial_delay"), h.initial_delay, ReadDuration, diag);
  return h;
}

// Always returns a ref (an empty one after errors) so that list indices stay aligned.
SecretRef ReadSecretRef(const Field& f, Diagnostics& diag) {
  SecretRef r;
  MapReader m(f, kSecretKeys,
              "expected a map such as {name: db-password, env: DB_PASSWORD} or "
              "{name: tls-key, file: tls.key}",
              diag);
  if (!m.ok()) return r;
  ReadInto(m.Require("name", "expected the name of a secret of the job's pool, e.g. db-password"),
           r.name, ReadString, diag);
  ReadInto(m.Get("env"), r.env, ReadString, diag);
  ReadInto(m.Get("file"), r.file, ReadString, diag);
  return r;
}

// Always returns a constraint (a default one after errors) so that list indices stay aligned
// with the file for the validator's messages.
Constraint ReadConstraint(const Field& f, Diagnostics& diag) {
  MapReader m(f, kConstraintKeys,
              "expected a map such as {host_label: zone, op: in, values: [a, b]} or "
              "{max_per_host: 1}",
              diag);
  if (!m.ok()) return LabelConstraint{};
  if (auto max = m.Get("max_per_host")) {
    MaxPerHostConstraint c;
    ReadCount(max, c.max_per_host, diag);
    ReadInto(m.Get("task_label"), c.task_label, ReadString, diag);
    for (absl::string_view other : {"host_label", "op", "values", "value"}) {
      if (auto o = m.Get(other)) {
        diag.Error(o->loc, o->path,
                   "cannot be combined with max_per_host; write a host label constraint as a "
                   "separate list item");
      }
    }
    return c;
  }
  LabelConstraint c;
  if (auto t = m.Get("task_label")) {
    diag.Error(t->loc, t->path,
               "only goes with max_per_host; expected {max_per_host: N, task_label: KEY}");
  }
  ReadInto(m.Require("host_label", "expected the name of a host label such as zone"), c.label,
           ReadString, diag);
  std::optional<Field> op =
      m.Require("op", "expected one of: in, not_in, exists, not_exists, gt, lt");
  if (!op) return c;
  std::optional<size_t> index = ReadEnum(*op, kOps, diag);
  if (!index) return c;
  c.op = static_cast<ConstraintOp>(*index);
  std::optional<Field> values = m.Get("values");
  std::optional<Field> value = m.Get("value");
  bool numeric = c.op == ConstraintOp::kGt || c.op == ConstraintOp::kLt;
  std::string op_name(ConstraintOpName(c.op));
  if (numeric) {
    if (values) {
      diag.Error(values->loc, values->path,
                 absl::StrCat("is not used by op ", op_name,
                              ", which compares with one number; "
                              "expected value: N"));
    }
    if (!value) {
      diag.Error(op->loc, ChildPath(f.path, "value"),
                 absl::StrCat("is required for op ", op_name, "; expected a number such as 8"));
    } else {
      ReadInto(value, c.number, ReadNumber, diag);
    }
  } else {
    if (value) {
      diag.Error(value->loc, value->path,
                 absl::StrCat("is only used by ops gt and lt",
                              c.op == ConstraintOp::kIn || c.op == ConstraintOp::kNotIn
                                  ? "; expected values: [a, b]"
                                  : absl::StrCat("; op ", op_name, " takes no value")));
    }
    if (values) {
      ReadInto(values, c.values, ReadStringList, diag);
    } else if (c.op == ConstraintOp::kIn || c.op == ConstraintOp::kNotIn) {
      diag.Error(op->loc, ChildPath(f.path, "values"),
                 absl::StrCat("is required for op ", op_name,
                              "; expected a list of at least one value such as [a, b]"));
    }
  }
  return c;
}

}  // namespace

std::optional<Resources> ReadResources(const Field& f, const Resources& base,
                                       bool require_cpu_memory, Diagnostics& diag) {
  MapReader m(f, kResourceKeys, "expected a map such as {cpu: 1, memory: 2Gi}", diag);
  if (!m.ok()) return std::nullopt;
  Resources r = base;
  for (Dim d : kAllDims) {
    std::optional<Field> field =
        require_cpu_memory && (d == Dim::kCpu || d == Dim::kMemory)
            ? m.Require(DimName(d), d == Dim::kCpu ? "expected cores such as 0.5 or 2, or 500m"
                                                   : "expected a size such as 512Mi or 2Gi")
            : m.Get(DimName(d));
    if (!field) continue;
    if (std::optional<int64_t> v = ReadQuantity(*field, d, diag)) r[d] = *v;
  }
  return r;
}

std::optional<std::map<std::string, std::string>> ReadEnv(const Field& f, Diagnostics& diag) {
  return ReadStringMap(f, "expected a map of variable names to values such as {MODE: full}", diag);
}

std::optional<ContainerSpec> ReadContainer(const Field& f, Diagnostics& diag) {
  MapReader m(f, kContainerKeys, "expected a map such as {image: registry.example.com/app:1.4}",
              diag);
  if (!m.ok()) return std::nullopt;
  ContainerSpec c;
  ReadInto(m.Require("image", "expected an image reference such as registry.example.com/app:1.4"),
           c.image, ReadString, diag);
  if (auto p = m.Get("pull")) {
    if (auto v = ReadEnum(*p, kPullPolicies, diag)) c.pull = static_cast<PullPolicy>(*v);
  }
  if (auto e = m.Get("entrypoint")) c.entrypoint = ReadStringList(*e, diag);
  if (auto a = m.Get("args")) c.args = ReadStringList(*a, diag);
  ReadInto(m.Get("user"), c.user, ReadString, diag);
  ReadInto(m.Get("read_only_rootfs"), c.read_only_rootfs, ReadBool, diag);
  if (auto n = m.Get("network")) {
    if (auto v = ReadEnum(*n, kNetworks, diag)) c.network = static_cast<ContainerNetwork>(*v);
  }
  ReadInto(m.Get("pull_secret"), c.pull_secret, ReadString, diag);
  if (auto ms = m.Get("mounts")) {
    auto items =
        ReadSequence(*ms, "expected a list such as [{source: tmpfs, target: /scratch}]", diag);
    for (const Field& item : items.value_or(std::vector<Field>{})) {
      MapReader mm(item, kMountKeys, "expected a map such as {source: tmpfs, target: /scratch}",
                   diag);
      ContainerMount mount;
      ReadInto(mm.Require("source", "expected tmpfs, sandbox[/DIR], volume or a host path"),
               mount.source, ReadString, diag);
      ReadInto(mm.Require("target", "expected an absolute path in the container"), mount.target,
               ReadString, diag);
      ReadInto(mm.Get("read_only"), mount.read_only, ReadBool, diag);
      c.mounts.push_back(std::move(mount));
    }
  }
  return c;
}

namespace {

// Over a base, `NAME: null` removes a variable.
void ReadEnvOver(const Field& f, std::map<std::string, std::string>& env, Diagnostics& diag) {
  MapReader m(f,
              "expected a map of variable names to values such as {MODE: full}, where "
              "NAME: null removes a variable of the base task",
              diag);
  for (const auto& [name, value] : m.entries()) {
    if (value.node.IsNull()) {
      env.erase(name);
    } else if (std::optional<std::string> v = ReadString(value, diag)) {
      env[name] = *std::move(v);
    }
  }
}

// The fields of a task other than command and resources, read into `t`. `over`: `t` is a base
// that the fields given change (a role's task, an override): a key replaces the base's field,
// env is merged, and null removes the base's health, readiness, deregistration_delay, volume or
// container.
void ReadTaskFields(const MapReader& m, TaskSpec& t, bool over, Diagnostics& diag) {
  auto removed = [&](const std::optional<Field>& f) { return over && f && f->node.IsNull(); };
  ReadInto(m.Get("gpu_models"), t.gpu_models, ReadStringList, diag);
  ReadInto(m.Get("ports"), t.ports, ReadStringList, diag);
  if (auto e = m.Get("env")) {
    if (over) {
      ReadEnvOver(*e, t.env, diag);
    } else {
      ReadInto(e, t.env, ReadEnv, diag);
    }
  }
  if (auto s = m.Get("secrets")) {
    t.secrets.clear();
    auto items =
        ReadSequence(*s, "expected a list such as [{name: db-password, env: DB_PASSWORD}]", diag);
    for (const Field& item : items.value_or(std::vector<Field>{})) {
      t.secrets.push_back(ReadSecretRef(item, diag));
    }
  }
  if (auto r = m.Get("restart")) t.restart = ReadRestart(*r, diag);
  if (auto h = m.Get("health")) t.health = removed(h) ? std::nullopt : ReadHealth(*h, diag);
  if (auto r = m.Get("readiness")) {
    t.readiness = removed(r) ? std::nullopt : ReadHealth(*r, diag);
  }
  if (auto c = m.Get("constraints")) {
    t.constraints.clear();
    auto items = ReadSequence(*c, "expected a list of constraints", diag);
    for (const Field& item : items.value_or(std::vector<Field>{})) {
      t.constraints.push_back(ReadConstraint(item, diag));
    }
  }
  if (auto v = m.Get("volume"); removed(v)) {
    t.volume.reset();
  } else if (v) {
    MapReader volume(*v, kVolumeKeys, "expected a map such as {size: 10Gi}", diag);
    VolumeSpec spec;
    if (auto size = volume.Require("size", "expected a size such as 10Gi")) {
      if (auto bytes = ReadQuantity(*size, Dim::kDisk, diag)) spec.size_bytes = *bytes;
    }
    if (volume.ok()) t.volume = spec;
  }
  if (auto c = m.Get("container")) {
    t.container = removed(c) ? std::nullopt : ReadContainer(*c, diag);
  }
  ReadInto(m.Get("kill_grace"), t.kill_grace, ReadDuration, diag);
  if (auto d = m.Get("deregistration_delay"); removed(d)) {
    t.deregistration_delay.reset();
  } else if (d) {
    if (auto v = ReadDuration(*d, diag)) t.deregistration_delay = *v;
  }
  ReadInto(m.Get("exclusive"), t.exclusive, ReadString, diag);
  ReadInto(m.Get("controller"), t.controller, ReadBool, diag);
  ReadInto(m.Get("user"), t.user, ReadString, diag);
  ReadInto(m.Get("identity"), t.identity, ReadBool, diag);
  ReadInto(m.Get("duration"), t.duration, ReadDuration, diag);
}

}  // namespace

TaskSpec ReadTask(const Field& f, Diagnostics& diag, absl::string_view default_command) {
  TaskSpec t;
  MapReader m(f, kTaskKeys, "expected a map with command and resources", diag);
  if (!m.ok()) return t;
  // A container's image may say what runs; every other task needs a command.
  std::optional<Field> command = m.Get("container") || !default_command.empty()
                                     ? m.Get("command")
                                     : m.Require("command", "expected the command line to run");
  if (!command && !m.Get("container")) t.command = std::string(default_command);
  ReadInto(command, t.command, ReadString, diag);
  if (auto r = m.Require("resources", "expected a map such as {cpu: 1, memory: 2Gi}")) {
    if (auto v = ReadResources(*r, Resources(), /*require_cpu_memory=*/true, diag)) {
      t.resources = *v;
    }
  }
  ReadTaskFields(m, t, /*over=*/false, diag);
  return t;
}

TaskSpec ReadTaskOver(const Field& f, const TaskSpec& base, Diagnostics& diag) {
  TaskSpec t = base;
  MapReader m(f, kTaskKeys,
              "expected a map of the task's fields to change, such as {command: ./worker, "
              "resources: {cpu: 2}}",
              diag);
  if (!m.ok()) return t;
  ReadInto(m.Get("command"), t.command, ReadString, diag);
  if (auto r = m.Get("resources")) {
    if (auto v = ReadResources(*r, base.resources, /*require_cpu_memory=*/false, diag)) {
      t.resources = *v;
    }
  }
  ReadTaskFields(m, t, /*over=*/true, diag);
  return t;
}

}  // namespace paceline::yaml_internal
