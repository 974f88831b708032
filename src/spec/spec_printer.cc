// PrintPoolSpec / PrintJobSpec: canonical YAML (see yaml_spec.h). yaml-cpp's emitter does the
// quoting, so any string the parser accepted prints back to the same string.

#include <string>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/units.h"
#include "spec/yaml_reader.h"
#include "spec/yaml_spec.h"
#include "yaml-cpp/yaml.h"

namespace paceline {
namespace {

using yaml_internal::FormatNumber;

template <typename V>
void Put(YAML::Emitter& out, absl::string_view key, const V& value) {
  out << YAML::Key << std::string(key) << YAML::Value << value;
}
void PutStr(YAML::Emitter& out, absl::string_view key, absl::string_view value) {
  Put(out, key, std::string(value));
}
void PutDuration(YAML::Emitter& out, absl::string_view key, absl::Duration d) {
  PutStr(out, key, FormatDurationShort(d));
}
void PutStrings(YAML::Emitter& out, absl::string_view key, const std::vector<std::string>& v) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& s : v) out << s;
  out << YAML::EndSeq;
}
void PutMap(YAML::Emitter& out, absl::string_view key,
            const std::map<std::string, std::string>& m) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : m) out << YAML::Key << k << YAML::Value << v;
  out << YAML::EndMap;
}

// {cpu: 1, memory: 2Gi[, disk: ...][, gpu: ...]}; with `all`, every dimension.
void PutResources(YAML::Emitter& out, absl::string_view key, const Resources& r, bool all) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (Dim d : kAllDims) {
    if (all || d == Dim::kCpu || d == Dim::kMemory || r[d] != 0) {
      PutStr(out, DimName(d), FormatQuantity(d, r[d]));
    }
  }
  out << YAML::EndMap;
}

std::string Finish(const YAML::Emitter& out) {
  PL_CHECK(out.good()) << "yaml emitter: " << out.GetLastError();
  return absl::StrCat(out.c_str(), "\n");
}

void PutSla(YAML::Emitter& out, const SlaSpec& s) {
  const SlaSpec d;
  if (s == d) return;
  out << YAML::Key << "sla" << YAML::Value << YAML::BeginMap;
  if (s.preemptible != d.preemptible) Put(out, "preemptible", s.preemptible);
  if (s.revocable != d.revocable) Put(out, "revocable", s.revocable);
  if (s.max_running_instances != d.max_running_instances) {
    Put(out, "max_running_instances", s.max_running_instances);
  }
  if (s.min_running_instances != d.min_running_instances) {
    Put(out, "min_running_instances", s.min_running_instances);
  }
  if (s.max_running_time != d.max_running_time) {
    PutDuration(out, "max_running_time", s.max_running_time);
  }
  if (s.expected_running_time != d.expected_running_time) {
    PutDuration(out, "expected_running_time", s.expected_running_time);
  }
  if (s.max_unavailable_instances != d.max_unavailable_instances) {
    Put(out, "max_unavailable_instances", s.max_unavailable_instances);
  }
  out << YAML::EndMap;
}

// With `whole` (a role's or an override's restart, which replaces its base's), the policy is
// always written, so that a restart at its defaults is still written out.
void PutRestart(YAML::Emitter& out, const RestartSpec& r, bool whole = false) {
  const RestartSpec d;
  if (r == d && !whole) return;
  out << YAML::Key << "restart" << YAML::Value << YAML::BeginMap;
  if (r.policy != d.policy || whole) PutStr(out, "policy", RestartPolicyName(r.policy));
  if (r.max_failures != d.max_failures) Put(out, "max_failures", r.max_failures);
  if (r.initial_backoff != d.initial_backoff) {
    PutDuration(out, "initial_backoff", r.initial_backoff);
  }
  if (r.max_backoff != d.max_backoff) PutDuration(out, "max_backoff", r.max_backoff);
  out << YAML::EndMap;
}

// A health or readiness check under `key`.
void PutHealth(YAML::Emitter& out, const HealthSpec& h, absl::string_view key = "health") {
  const HealthSpec d;
  out << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
  if (const auto* c = std::get_if<CommandCheck>(&h.check)) {
    PutStr(out, "command", c->command);
  } else if (const auto* http = std::get_if<HttpCheck>(&h.check)) {
    out << YAML::Key << "http" << YAML::Value << YAML::Flow << YAML::BeginMap;
    PutStr(out, "port", http->port);
    PutStr(out, "path", http->path);
    out << YAML::EndMap;
  } else if (const auto* tcp = std::get_if<TcpCheck>(&h.check)) {
    out << YAML::Key << "tcp" << YAML::Value << YAML::Flow << YAML::BeginMap;
    PutStr(out, "port", tcp->port);
    out << YAML::EndMap;
  }
  if (h.interval != d.interval) PutDuration(out, "interval", h.interval);
  if (h.timeout != d.timeout) PutDuration(out, "timeout", h.timeout);
  if (h.failures != d.failures) Put(out, "failures", h.failures);
  if (h.initial_delay != d.initial_delay) PutDuration(out, "initial_delay", h.initial_delay);
  out << YAML::EndMap;
}

void PutConstraint(YAML::Emitter& out, const Constraint& c) {
  out << YAML::Flow << YAML::BeginMap;
  if (const auto* m = std::get_if<MaxPerHostConstraint>(&c)) {
    Put(out, "max_per_host", m->max_per_host);
    if (!m->task_label.empty()) PutStr(out, "task_label", m->task_label);
  } else {
    const auto& l = std::get<LabelConstraint>(c);
    PutStr(out, "host_label", l.label);
    PutStr(out, "op", ConstraintOpName(l.op));
    if (l.op == ConstraintOp::kGt || l.op == ConstraintOp::kLt) {
      PutStr(out, "value", FormatNumber(l.number));
    } else if (!l.values.empty()) {
      PutStrings(out, "values", l.values);
    }
  }
  out << YAML::EndMap;
}

void PutContainer(YAML::Emitter& out, const ContainerSpec& c) {
  const ContainerSpec d;
  out << YAML::Key << "container" << YAML::Value << YAML::BeginMap;
  PutStr(out, "image", c.image);
  if (c.pull != d.pull) PutStr(out, "pull", PullPolicyName(c.pull));
  if (c.entrypoint) PutStrings(out, "entrypoint", *c.entrypoint);
  if (c.args) PutStrings(out, "args", *c.args);
  if (!c.user.empty()) PutStr(out, "user", c.user);
  if (c.read_only_rootfs) Put(out, "read_only_rootfs", true);
  if (!c.mounts.empty()) {
    out << YAML::Key << "mounts" << YAML::Value << YAML::BeginSeq;
    for (const ContainerMount& m : c.mounts) {
      out << YAML::Flow << YAML::BeginMap;
      PutStr(out, "source", m.source);
      PutStr(out, "target", m.target);
      if (m.read_only) Put(out, "read_only", true);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (c.network != d.network) PutStr(out, "network", ContainerNetworkName(c.network));
  if (!c.pull_secret.empty()) PutStr(out, "pull_secret", c.pull_secret);
  out << YAML::EndMap;
}

void PutSecrets(YAML::Emitter& out, const std::vector<SecretRef>& secrets) {
  out << YAML::Key << "secrets" << YAML::Value << YAML::BeginSeq;
  for (const SecretRef& s : secrets) {
    out << YAML::Flow << YAML::BeginMap;
    PutStr(out, "name", s.name);
    if (!s.env.empty()) PutStr(out, "env", s.env);
    if (!s.file.empty()) PutStr(out, "file", s.file);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void PutConstraints(YAML::Emitter& out, const std::vector<Constraint>& constraints) {
  out << YAML::Key << "constraints" << YAML::Value << YAML::BeginSeq;
  for (const Constraint& c : constraints) PutConstraint(out, c);
  out << YAML::EndSeq;
}

void PutVolume(YAML::Emitter& out, const VolumeSpec& v) {
  out << YAML::Key << "volume" << YAML::Value << YAML::Flow << YAML::BeginMap;
  PutStr(out, "size", FormatBytes(v.size_bytes));
  out << YAML::EndMap;
}

void PutTask(YAML::Emitter& out, const TaskSpec& t) {
  const TaskSpec d;
  out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
  if (!t.command.empty() || !t.container) PutStr(out, "command", t.command);
  PutResources(out, "resources", t.resources, /*all=*/false);
  if (!t.gpu_models.empty()) PutStrings(out, "gpu_models", t.gpu_models);
  if (!t.ports.empty()) PutStrings(out, "ports", t.ports);
  if (!t.env.empty()) PutMap(out, "env", t.env);
  if (!t.secrets.empty()) PutSecrets(out, t.secrets);
  PutRestart(out, t.restart);
  if (t.health) PutHealth(out, *t.health);
  if (t.readiness) PutHealth(out, *t.readiness, "readiness");
  if (!t.constraints.empty()) PutConstraints(out, t.constraints);
  if (t.volume) PutVolume(out, *t.volume);
  if (t.container) PutContainer(out, *t.container);
  if (t.kill_grace != d.kill_grace) PutDuration(out, "kill_grace", t.kill_grace);
  if (t.deregistration_delay) {
    PutDuration(out, "deregistration_delay", *t.deregistration_delay);
  }
  if (!t.exclusive.empty()) PutStr(out, "exclusive", t.exclusive);
  if (t.controller) Put(out, "controller", true);
  if (!t.user.empty()) PutStr(out, "user", t.user);
  if (t.identity) Put(out, "identity", true);
  if (t.duration != d.duration) PutDuration(out, "duration", t.duration);
  out << YAML::EndMap;
}

void PutNull(YAML::Emitter& out, absl::string_view key) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::Null;
}

// The fields of `t` that differ from `base`, as ReadTaskOver reads them back (a role's task, an
// instance override): each differing field whole, except resources and env, key by key.
void PutTaskFields(YAML::Emitter& out, const TaskSpec& t, const TaskSpec& base) {
  out << YAML::BeginMap;
  if (t.command != base.command) PutStr(out, "command", t.command);
  if (t.resources != base.resources) {
    out << YAML::Key << "resources" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (Dim d : kAllDims) {
      if (t.resources[d] != base.resources[d]) {
        PutStr(out, DimName(d), FormatQuantity(d, t.resources[d]));
      }
    }
    out << YAML::EndMap;
  }
  if (t.gpu_models != base.gpu_models) PutStrings(out, "gpu_models", t.gpu_models);
  if (t.ports != base.ports) PutStrings(out, "ports", t.ports);
  if (t.env != base.env) {
    out << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : base.env) {
      if (!t.env.contains(k)) out << YAML::Key << k << YAML::Value << YAML::Null;
    }
    for (const auto& [k, v] : t.env) {
      auto it = base.env.find(k);
      if (it == base.env.end() || it->second != v) out << YAML::Key << k << YAML::Value << v;
    }
    out << YAML::EndMap;
  }
  if (t.secrets != base.secrets) PutSecrets(out, t.secrets);
  if (t.restart != base.restart) PutRestart(out, t.restart, /*whole=*/true);
  if (t.health != base.health) {
    if (t.health) {
      PutHealth(out, *t.health);
    } else {
      PutNull(out, "health");
    }
  }
  if (t.readiness != base.readiness) {
    if (t.readiness) {
      PutHealth(out, *t.readiness, "readiness");
    } else {
      PutNull(out, "readiness");
    }
  }
  if (t.constraints != base.constraints) PutConstraints(out, t.constraints);
  if (t.volume != base.volume) {
    if (t.volume) {
      PutVolume(out, *t.volume);
    } else {
      PutNull(out, "volume");
    }
  }
  if (t.container != base.container) {
    if (t.container) {
      PutContainer(out, *t.container);
    } else {
      PutNull(out, "container");
    }
  }
  if (t.kill_grace != base.kill_grace) PutDuration(out, "kill_grace", t.kill_grace);
  if (t.deregistration_delay != base.deregistration_delay) {
    if (t.deregistration_delay) {
      PutDuration(out, "deregistration_delay", *t.deregistration_delay);
    } else {
      PutNull(out, "deregistration_delay");
    }
  }
  if (t.exclusive != base.exclusive) PutStr(out, "exclusive", t.exclusive);
  if (t.controller != base.controller) Put(out, "controller", t.controller);
  if (t.user != base.user) PutStr(out, "user", t.user);
  if (t.identity != base.identity) Put(out, "identity", t.identity);
  if (t.duration != base.duration) PutDuration(out, "duration", t.duration);
  out << YAML::EndMap;
}

// Only what differs from the defaults, where restart's default follows the rendezvous.
void PutGang(YAML::Emitter& out, const GangSpec& g) {
  GangSpec d;
  d.rendezvous = g.rendezvous;
  d.restart = g.rendezvous == Rendezvous::kNone ? GangRestart::kInstance : GangRestart::kGang;
  if (g == d && g.rendezvous == Rendezvous::kNone) return;
  out << YAML::Key << "gang" << YAML::Value << YAML::BeginMap;
  if (g.rendezvous != Rendezvous::kNone) PutStr(out, "rendezvous", RendezvousName(g.rendezvous));
  if (g.port != d.port) PutStr(out, "port", g.port);
  if (g.restart != d.restart) PutStr(out, "restart", GangRestartName(g.restart));
  if (g.max_restarts != d.max_restarts) Put(out, "max_restarts", g.max_restarts);
  out << YAML::EndMap;
}

void PutRoles(YAML::Emitter& out, const JobSpec& spec) {
  if (spec.roles.empty()) return;
  out << YAML::Key << "roles" << YAML::Value << YAML::BeginSeq;
  for (const RoleSpec& role : spec.roles) {
    out << YAML::BeginMap;
    PutStr(out, "name", role.name);
    Put(out, "instances", role.instances);
    if (role.task != spec.task) {
      out << YAML::Key << "task" << YAML::Value;
      PutTaskFields(out, role.task, spec.task);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void PutUpdate(YAML::Emitter& out, const UpdateSpec& u) {
  const UpdateSpec d;
  if (u == d) return;
  out << YAML::Key << "update" << YAML::Value << YAML::BeginMap;
  if (u.batch_size != d.batch_size) Put(out, "batch_size", u.batch_size);
  if (u.max_failures != d.max_failures) Put(out, "max_failures", u.max_failures);
  if (u.rollback_on_failure != d.rollback_on_failure) {
    Put(out, "rollback_on_failure", u.rollback_on_failure);
  }
  if (u.in_place != d.in_place) Put(out, "in_place", u.in_place);
  if (u.min_healthy_time != d.min_healthy_time) {
    PutDuration(out, "min_healthy_time", u.min_healthy_time);
  }
  out << YAML::EndMap;
}

// schedule: cron, time_zone, concurrency, keep_* always; starting_deadline when set; suspend
// when true.
void PutSchedule(YAML::Emitter& out, const ScheduleSpec& s) {
  out << YAML::Key << "schedule" << YAML::Value << YAML::BeginMap;
  PutStr(out, "cron", s.cron);
  PutStr(out, "time_zone", s.time_zone);
  PutStr(out, "concurrency", ConcurrencyPolicyName(s.concurrency));
  if (s.starting_deadline) PutDuration(out, "starting_deadline", *s.starting_deadline);
  Put(out, "keep_succeeded", s.keep_succeeded);
  Put(out, "keep_failed", s.keep_failed);
  if (s.suspend) Put(out, "suspend", true);
  out << YAML::EndMap;
}

void PutOverrides(YAML::Emitter& out, const JobSpec& spec) {
  if (spec.instance_overrides.empty()) return;
  out << YAML::Key << "instance_overrides" << YAML::Value << YAML::BeginMap;
  for (const auto& [index, o] : spec.instance_overrides) {
    out << YAML::Key << index << YAML::Value;
    PutTaskFields(out, o.task, spec.BaseTaskFor(index));
  }
  out << YAML::EndMap;
}

}  // namespace

std::string PrintPoolSpec(const PoolSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!spec.description.empty()) PutStr(out, "description", spec.description);
  PutStr(out, "type", PoolTypeName(spec.type));
  bool any_dim = false;
  for (Dim d : kAllDims) any_dim |= !(spec.dim(d) == DimSpec{});
  if (any_dim) {
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
    for (Dim d : kAllDims) {
      const DimSpec& ds = spec.dim(d);
      if (ds == DimSpec{}) continue;
      out << YAML::Key << std::string(DimName(d)) << YAML::Value << YAML::Flow << YAML::BeginMap;
      PutStr(out, "reservation", FormatQuantity(d, ds.reservation));
      PutStr(out, "limit", FormatQuantity(d, ds.limit));  // kUnlimited prints "unlimited"
      PutStr(out, "share", FormatNumber(ds.share));
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  if (spec.controller_limit_percent) {
    PutStr(out, "controller_limit",
           absl::StrCat(FormatNumber(*spec.controller_limit_percent), "%"));
  }
  if (spec.slack_limit_percent) {
    PutStr(out, "slack_limit", absl::StrCat(FormatNumber(*spec.slack_limit_percent), "%"));
  }
  if (spec.retain_terminal) {
    if (*spec.retain_terminal == absl::InfiniteDuration()) {
      PutStr(out, "retain_terminal", "forever");
    } else {
      PutDuration(out, "retain_terminal", *spec.retain_terminal);
    }
  }
  if (spec.fair_share) {
    out << YAML::Key << "fair_share" << YAML::Value << YAML::Flow << YAML::BeginMap;
    PutDuration(out, "half_life", spec.fair_share->half_life);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return Finish(out);
}

std::string PrintJobSpec(const JobSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  PutStr(out, "name", spec.name);
  if (!spec.description.empty()) PutStr(out, "description", spec.description);
  if (!spec.owner.empty()) PutStr(out, "owner", spec.owner);
  PutStr(out, "type", JobTypeName(spec.type));
  if (spec.type != JobType::kDaemon) Put(out, "instances", spec.instances);
  if (spec.priority != 0) Put(out, "priority", spec.priority);
  if (!spec.labels.empty()) PutMap(out, "labels", spec.labels);
  PutSla(out, spec.sla);
  PutTask(out, spec.task);
  PutUpdate(out, spec.update);
  PutGang(out, spec.gang);
  if (spec.completion != Completion::kAllInstances) {
    PutStr(out, "completion", CompletionName(spec.completion));
  }
  PutRoles(out, spec);
  if (!spec.depends_on.empty()) {
    out << YAML::Key << "depends_on" << YAML::Value << YAML::BeginSeq;
    for (const JobDependency& dep : spec.depends_on) {
      out << YAML::Flow << YAML::BeginMap;
      PutStr(out, "job", dep.job);
      PutStr(out, "condition", DependencyConditionName(dep.condition));
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (spec.schedule) PutSchedule(out, *spec.schedule);
  PutOverrides(out, spec);
  out << YAML::EndMap;
  return Finish(out);
}

}  // namespace paceline
