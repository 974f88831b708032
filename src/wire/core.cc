#include "wire/core.h"

#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"

namespace paceline::wire {
namespace {

// v1::Task::State is the domain TaskState shifted by one (0 is STATE_UNSPECIFIED).
static_assert(static_cast<int>(TaskState::kPending) + 1 == v1::Task::PENDING);
static_assert(static_cast<int>(TaskState::kKilling) + 1 == v1::Task::KILLING);
static_assert(static_cast<int>(TaskState::kLost) + 1 == v1::Task::LOST);

int64_t Millis(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

absl::StatusOr<absl::Duration> NonNegativeMillis(int64_t ms, absl::string_view field) {
  if (ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", ms, "; expected a duration in milliseconds >= 0"));
  }
  return absl::Milliseconds(ms);
}

v1::HealthCheck ToProto(const HealthSpec& h) {
  v1::HealthCheck p;
  std::visit(
      [&p](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, CommandCheck>) {
          p.set_command(c.command);
        } else if constexpr (std::is_same_v<C, HttpCheck>) {
          p.mutable_http()->set_port(c.port);
          p.mutable_http()->set_path(c.path);
        } else {
          p.set_tcp_port(c.port);
        }
      },
      h.check);
  p.set_interval_ms(Millis(h.interval));
  p.set_timeout_ms(Millis(h.timeout));
  p.set_failures(h.failures);
  p.set_initial_delay_ms(Millis(h.initial_delay));
  return p;
}

// `field`: "health" or "readiness", for the errors.
absl::StatusOr<HealthSpec> FromProto(const v1::HealthCheck& p, absl::string_view field) {
  HealthSpec h;
  switch (p.check_case()) {
    case v1::HealthCheck::kCommand:
      h.check = CommandCheck{p.command()};
      break;
    case v1::HealthCheck::kHttp:
      h.check = HttpCheck{p.http().port(), p.http().path()};
      break;
    case v1::HealthCheck::kTcpPort:
      h.check = TcpCheck{p.tcp_port()};
      break;
    case v1::HealthCheck::CHECK_NOT_SET:
      return absl::InvalidArgumentError(
          absl::StrCat("task.", field, ": no check; expected one of command, http, tcp_port"));
  }
  absl::StatusOr<absl::Duration> interval =
      NonNegativeMillis(p.interval_ms(), absl::StrCat(field, ".interval_ms"));
  absl::StatusOr<absl::Duration> timeout =
      NonNegativeMillis(p.timeout_ms(), absl::StrCat(field, ".timeout_ms"));
  absl::StatusOr<absl::Duration> delay =
      NonNegativeMillis(p.initial_delay_ms(), absl::StrCat(field, ".initial_delay_ms"));
  for (const auto* s : {&interval, &timeout, &delay}) {
    if (!s->ok()) return s->status();
  }
  h.interval = *interval;
  h.timeout = *timeout;
  h.initial_delay = *delay;
  h.failures = p.failures();
  return h;
}

}  // namespace

v1::Resources ToProto(const Resources& r) {
  v1::Resources p;
  p.set_cpu_milli(r.cpu_milli());
  p.set_memory_bytes(r.memory_bytes());
  p.set_disk_bytes(r.disk_bytes());
  p.set_gpu_milli(r.gpu_milli());
  return p;
}

Resources FromProto(const v1::Resources& r) {
  return Resources::Of(r.cpu_milli(), r.memory_bytes(), r.disk_bytes(), r.gpu_milli());
}

v1::RunRef ToProto(const RunId& run) {
  v1::RunRef p;
  p.set_job_id(run.task.job.value());
  p.set_instance(run.task.instance);
  p.set_run(run.run);
  return p;
}

RunId FromProto(const v1::RunRef& run) {
  return RunId{TaskId{JobId(run.job_id()), run.instance()}, run.run()};
}

int64_t ToUnixMillis(absl::Time t) { return t == absl::InfinitePast() ? 0 : absl::ToUnixMillis(t); }

v1::Task::State ToProto(TaskState s) {
  return static_cast<v1::Task::State>(static_cast<int>(s) + 1);
}

absl::StatusOr<TaskState> FromProto(v1::Task::State s, absl::string_view field) {
  if (s <= v1::Task::STATE_UNSPECIFIED || s > v1::Task::KILLING) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", static_cast<int>(s), "; expected a task state"));
  }
  return static_cast<TaskState>(static_cast<int>(s) - 1);
}

namespace {

v1::ContainerLaunch ToProto(const ContainerSpec& c) {
  v1::ContainerLaunch p;
  p.set_image(c.image);
  p.set_pull(std::string(PullPolicyName(c.pull)));
  if (c.entrypoint)
    *p.mutable_entrypoint()->mutable_values() = {c.entrypoint->begin(), c.entrypoint->end()};
  if (c.args) *p.mutable_args()->mutable_values() = {c.args->begin(), c.args->end()};
  p.set_user(c.user);
  p.set_read_only_rootfs(c.read_only_rootfs);
  for (const ContainerMount& m : c.mounts) {
    v1::ContainerMountSpec* out = p.add_mounts();
    out->set_source(m.source);
    out->set_target(m.target);
    out->set_read_only(m.read_only);
  }
  p.set_network(std::string(ContainerNetworkName(c.network)));
  p.set_pull_secret(c.pull_secret);
  return p;
}

absl::StatusOr<ContainerSpec> FromProto(const v1::ContainerLaunch& p) {
  ContainerSpec c;
  c.image = p.image();
  bool pull_ok = false;
  for (PullPolicy policy : {PullPolicy::kIfNotPresent, PullPolicy::kAlways, PullPolicy::kNever}) {
    if (PullPolicyName(policy) == p.pull()) {
      c.pull = policy;
      pull_ok = true;
    }
  }
  if (!pull_ok) {
    return absl::InvalidArgumentError(absl::StrCat("task.container.pull: '", p.pull(),
                                                   "'; expected if-not-present, always or never"));
  }
  if (p.network() != "host" && p.network() != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("task.container.network: '", p.network(), "'; expected host or none"));
  }
  c.network = p.network() == "none" ? ContainerNetwork::kNone : ContainerNetwork::kHost;
  if (p.has_entrypoint())
    c.entrypoint.emplace(p.entrypoint().values().begin(), p.entrypoint().values().end());
  if (p.has_args()) c.args.emplace(p.args().values().begin(), p.args().values().end());
  c.user = p.user();
  c.read_only_rootfs = p.read_only_rootfs();
  for (const v1::ContainerMountSpec& m : p.mounts()) {
    c.mounts.push_back({m.source(), m.target(), m.read_only()});
  }
  c.pull_secret = p.pull_secret();
  return c;
}

}  // namespace

v1::TaskLaunchSpec ToLaunchSpec(const TaskSpec& task) {
  v1::TaskLaunchSpec p;
  p.set_command(task.command);
  *p.mutable_resources() = ToProto(task.resources);
  for (const std::string& port : task.ports) p.add_ports(port);
  for (const auto& [k, v] : task.env) (*p.mutable_env())[k] = v;
  if (task.health) *p.mutable_health() = ToProto(*task.health);
  if (task.readiness) *p.mutable_readiness() = ToProto(*task.readiness);
  if (task.volume) p.set_volume_size_bytes(task.volume->size_bytes);
  p.set_kill_grace_ms(Millis(task.kill_grace));
  p.set_user(task.user);
  if (task.container) *p.mutable_container() = ToProto(*task.container);
  for (const SecretRef& s : task.secrets) {
    v1::SecretRef* r = p.add_secrets();
    r->set_name(s.name);
    r->set_env(s.env);
    r->set_file(s.file);
  }
  return p;
}

absl::StatusOr<TaskSpec> FromLaunchSpec(const v1::TaskLaunchSpec& p) {
  TaskSpec task;
  task.command = p.command();
  task.resources = FromProto(p.resources());
  task.ports.assign(p.ports().begin(), p.ports().end());
  task.env.insert(p.env().begin(), p.env().end());
  if (p.has_health()) {
    absl::StatusOr<HealthSpec> h = FromProto(p.health(), "health");
    if (!h.ok()) return h.status();
    task.health = *std::move(h);
  }
  if (p.has_readiness()) {
    absl::StatusOr<HealthSpec> r = FromProto(p.readiness(), "readiness");
    if (!r.ok()) return r.status();
    task.readiness = *std::move(r);
  }
  if (p.has_volume_size_bytes()) {
    if (p.volume_size_bytes() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "task.volume_size_bytes: ", p.volume_size_bytes(), "; expected a size >= 0"));
    }
    task.volume = VolumeSpec{p.volume_size_bytes()};
  }
  if (p.has_container()) {
    absl::StatusOr<ContainerSpec> c = FromProto(p.container());
    if (!c.ok()) return c.status();
    task.container = *std::move(c);
  }
  absl::StatusOr<absl::Duration> grace = NonNegativeMillis(p.kill_grace_ms(), "task.kill_grace_ms");
  if (!grace.ok()) return grace.status();
  task.kill_grace = *grace;
  task.user = p.user();
  for (const v1::SecretRef& r : p.secrets()) task.secrets.push_back({r.name(), r.env(), r.file()});
  return task;
}

}  // namespace paceline::wire
