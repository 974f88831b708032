#include "spec/spec_generator.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"

namespace paceline {
namespace {

using Rng = std::mt19937_64;

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool Chance(Rng& rng, int percent) { return Uniform(rng, 0, 99) < percent; }

// Strings that trip naive YAML writers.
constexpr std::array<const char*, 32> kTricky = {
    "true", "false", "null", "~",      "yes",  "no",  "a: b", "#hash", "x #y", "- item", "-",
    "---",  "...",   "'q'",  "\"dq\"", "{m}",  "[s]", "*ref", "&anc",  "!tag", "%pct",   "@at",
    "`bt`", "? q",   "|",    ">",      "0x10", "1e3", "12",   "0.5",   "über", "日本"};

std::string Word(Rng& rng, absl::string_view first, absl::string_view rest, int max_len) {
  std::string s(1, first[Uniform(rng, 0, static_cast<int64_t>(first.size()) - 1)]);
  int64_t n = Uniform(rng, 0, max_len - 1);
  for (int64_t i = 0; i < n; ++i) s += rest[Uniform(rng, 0, static_cast<int64_t>(rest.size()) - 1)];
  return s;
}

constexpr absl::string_view kLower = "abcdefghijklmnopqrstuvwxyz";
constexpr absl::string_view kAlnum =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

std::string Line(Rng& rng) {
  switch (Uniform(rng, 0, 3)) {
    case 0:
      return kTricky[Uniform(rng, 0, kTricky.size() - 1)];
    case 1:
      return absl::StrCat(" ", Word(rng, kAlnum, "ab :#-'\"", 8), " ");
    default: {
      std::string s;
      int64_t n = Uniform(rng, 1, 24);
      for (int64_t i = 0; i < n; ++i) s += static_cast<char>(Uniform(rng, 0x20, 0x7e));
      return s;
    }
  }
}

std::string Text(Rng& rng) {
  if (Chance(rng, 20)) return absl::StrCat(Line(rng), "\n", Line(rng), "\tend");
  return Line(rng);
}

absl::Duration RandomDuration(Rng& rng) {
  switch (Uniform(rng, 0, 4)) {
    case 0:
      return absl::Seconds(Uniform(rng, 1, 100000));
    case 1:
      return absl::Milliseconds(Uniform(rng, 1, 10000000));
    case 2:
      return absl::Minutes(Uniform(rng, 1, 600));
    case 3:
      return absl::Nanoseconds(Uniform(rng, 1, 1000000000));
    default:
      return absl::Hours(Uniform(rng, 1, 100)) + absl::Seconds(Uniform(rng, 0, 3599));
  }
}

int64_t RandomBytes(Rng& rng) {
  switch (Uniform(rng, 0, 2)) {
    case 0:
      return Uniform(rng, 1, 64) << Uniform(rng, 20, 40);  // whole Mi/Gi/Ti
    case 1:
      return Uniform(rng, 1, 5000) * 1000000;  // decimal M
    default:
      return Uniform(rng, 1, int64_t{1} << 45);  // odd byte counts
  }
}

int64_t RandomGpu(Rng& rng) {
  switch (Uniform(rng, 0, 2)) {
    case 0:
      return 0;
    case 1:
      return Uniform(rng, 1, 999);  // a fraction of one device
    default:
      return Uniform(rng, 1, 8) * 1000;
  }
}

Resources RandomResources(Rng& rng) {
  return Resources::Of(Uniform(rng, 1, 128000), RandomBytes(rng),
                       Chance(rng, 50) ? 0 : RandomBytes(rng), RandomGpu(rng));
}

std::map<std::string, std::string> RandomEnv(Rng& rng, int max) {
  std::map<std::string, std::string> env;
  for (int64_t i = Uniform(rng, 0, max); i > 0; --i) {
    env[Word(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_", "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", 10)] =
        Text(rng);
  }
  return env;
}

Constraint RandomConstraint(Rng& rng, const JobSpec& job) {
  if (Chance(rng, 30)) {
    MaxPerHostConstraint m;
    m.max_per_host = static_cast<uint32_t>(Uniform(rng, 1, 10));
    if (!job.labels.empty() && Chance(rng, 50)) m.task_label = job.labels.begin()->first;
    return m;
  }
  LabelConstraint l;
  l.label = Word(rng, kAlnum, "abcdefgh./_-", 12);
  l.op = static_cast<ConstraintOp>(Uniform(rng, 0, 5));
  if (l.op == ConstraintOp::kIn || l.op == ConstraintOp::kNotIn) {
    for (int64_t i = Uniform(rng, 1, 3); i > 0; --i) l.values.push_back(Line(rng));
  } else if (l.op == ConstraintOp::kGt || l.op == ConstraintOp::kLt) {
    l.number = Chance(rng, 50) ? static_cast<double>(Uniform(rng, -100, 100))
                               : std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
  }
  return l;
}

// A health or readiness check on one of the task's ports, or a command.
HealthSpec RandomProbe(Rng& rng, const TaskSpec& t) {
  HealthSpec h;
  if (!t.ports.empty() && Chance(rng, 70)) {
    const std::string& port = t.ports[Uniform(rng, 0, t.ports.size() - 1)];
    if (Chance(rng, 50)) {
      h.check = HttpCheck{port, absl::StrCat("/", Word(rng, kAlnum, "abc/?=&", 10))};
    } else {
      h.check = TcpCheck{port};
    }
  } else {
    h.check = CommandCheck{Text(rng)};
  }
  h.interval = RandomDuration(rng);
  h.timeout = RandomDuration(rng);
  h.failures = static_cast<uint32_t>(Uniform(rng, 1, 10));
  if (Chance(rng, 50)) h.initial_delay = RandomDuration(rng);
  return h;
}

TaskSpec RandomTask(Rng& rng, const JobSpec& job) {
  TaskSpec t;
  t.command = Chance(rng, 50) ? "./run --shard $PACELINE_INSTANCE_ID" : Text(rng);
  t.resources = RandomResources(rng);
  if (t.resources.gpu_milli() > 0 && Chance(rng, 50)) t.gpu_models = {"V100M32", "A100"};
  for (int64_t i = Uniform(rng, 0, 3); i > 0; --i) {
    std::string p = Word(rng, kLower, "abcdefghij_0123456789", 8);
    if (std::find(t.ports.begin(), t.ports.end(), p) == t.ports.end()) t.ports.push_back(p);
  }
  t.env = RandomEnv(rng, 3);
  for (int64_t i = Chance(rng, 20) ? Uniform(rng, 1, 3) : 0; i > 0; --i) {
    SecretRef s;
    s.name = Word(rng, kLower, "abcdefghij.-_0123456789", 12);
    if (Chance(rng, 50)) {
      s.env = absl::StrCat("SECRET_", t.secrets.size());
    } else {
      s.file = absl::StrCat(s.name, ".", t.secrets.size());
    }
    t.secrets.push_back(std::move(s));
  }
  if (Chance(rng, 50)) {
    t.restart.policy = static_cast<RestartPolicy>(Uniform(rng, 0, 2));
    if (t.restart.policy != RestartPolicy::kNever) {
      t.restart.max_failures = static_cast<uint32_t>(Uniform(rng, 0, 100));
    }
    t.restart.initial_backoff = RandomDuration(rng);
    t.restart.max_backoff = t.restart.initial_backoff + RandomDuration(rng);
  }
  if (Chance(rng, 50)) t.health = RandomProbe(rng, t);
  if (HasEndpoints(job.type)) {
    if (Chance(rng, 30)) t.readiness = RandomProbe(rng, t);
    if (Chance(rng, 30)) t.deregistration_delay = RandomDuration(rng);
  }
  for (int64_t i = Uniform(rng, 0, 3); i > 0; --i)
    t.constraints.push_back(RandomConstraint(rng, job));
  if (job.type == JobType::kStateful && Chance(rng, 70)) t.volume = VolumeSpec{RandomBytes(rng)};
  if (Chance(rng, 30)) t.kill_grace = Chance(rng, 20) ? absl::ZeroDuration() : RandomDuration(rng);
  if (Chance(rng, 20)) t.exclusive = Word(rng, kAlnum, "abc-", 10);
  t.controller = Chance(rng, 10);
  if (Chance(rng, 20)) t.user = Line(rng);
  t.identity = Chance(rng, 10);
  if (Chance(rng, 30)) t.duration = RandomDuration(rng);
  return t;
}

// `base` with a few of its fields changed (a role's task, an override's), still valid.
TaskSpec DeriveTask(Rng& rng, const JobSpec& job, const TaskSpec& base) {
  TaskSpec t = base;
  const TaskSpec other = RandomTask(rng, job);
  for (int64_t n = Uniform(rng, 1, 4); n > 0; --n) {
    switch (Uniform(rng, 0, 13)) {
      case 0:
        t.command = other.command;
        break;
      case 1: {  // one of cpu, memory, disk
        Dim d = kAllDims[Uniform(rng, 0, 2)];
        t.resources[d] = other.resources[d];
        break;
      }
      case 2:
        t.resources = other.resources;
        t.gpu_models = other.gpu_models;
        break;
      case 3:  // add, change and remove variables
        for (const auto& [k, v] : RandomEnv(rng, 2)) t.env[k] = v;
        if (!t.env.empty() && Chance(rng, 50)) t.env.erase(t.env.begin());
        break;
      case 4:  // the checks name ports
        t.health = other.health;
        t.readiness = other.readiness;
        t.ports = other.ports;
        break;
      case 5:
        t.health.reset();
        t.readiness.reset();
        t.deregistration_delay = other.deregistration_delay;
        break;
      case 6:
        t.kill_grace = RandomDuration(rng);
        break;
      case 7:
        t.restart = other.restart;
        break;
      case 8:
        t.constraints = other.constraints;
        break;
      case 9:
        t.container = ContainerSpec{
            .image = absl::StrCat("registry.example.com/", Word(rng, kLower, kLower, 8), ":1.4")};
        t.user.clear();
        break;
      case 10:
        t.user = Chance(rng, 50) && !t.container ? Line(rng) : "";
        break;
      case 11:
        t.identity = !t.identity;
        break;
      case 12:
        t.controller = !t.controller;
        break;
      default:
        t.secrets = other.secrets;
        for (const SecretRef& s : t.secrets) t.env.erase(s.env);
        break;
    }
  }
  if (t == base) t.identity = !t.identity;
  return t;
}

void AddRoles(Rng& rng, JobSpec& j) {
  const int64_t n = Uniform(rng, 1, std::min<int64_t>(3, j.instances));
  uint32_t left = j.instances;
  for (int64_t i = 0; i < n; ++i) {
    RoleSpec role;
    role.name = absl::StrCat(Word(rng, "abcdefghijklmnopqrstuvwxyz0123456789",
                                  "abcdefghijklmnopqrstuvwxyz0123456789-", 12),
                             "-", i);
    role.instances = i + 1 == n ? left : static_cast<uint32_t>(Uniform(rng, 1, left - (n - 1 - i)));
    left -= role.instances;
    role.task = Chance(rng, 30) ? j.task : DeriveTask(rng, j, j.task);
    j.roles.push_back(std::move(role));
  }
}

void AddGang(Rng& rng, JobSpec& j) {
  SlaSpec& s = j.sla;
  s.min_running_instances =
      static_cast<uint32_t>(Uniform(rng, 2, std::min<uint32_t>(j.instances, 50)));
  if (s.max_running_instances != 0 && s.max_running_instances < s.min_running_instances) {
    s.max_running_instances = s.min_running_instances;
  }
  GangSpec& g = j.gang;
  g.rendezvous = static_cast<Rendezvous>(Uniform(rng, 0, 3));
  if (Chance(rng, 30)) g.port = Word(rng, kLower, "abcdefghij_0123456789", 8);
  // A rendezvous restarts its gang together (an instance alone would meet a moved-on world).
  g.restart = g.rendezvous != Rendezvous::kNone || Chance(rng, 50) ? GangRestart::kGang
                                                                   : GangRestart::kInstance;
  if (Chance(rng, 50)) g.max_restarts = static_cast<uint32_t>(Uniform(rng, 0, 20));
}

// As the parser does: pytorch and tensorflow need their port in every task.
void AddRendezvousPort(JobSpec& j) {
  if (j.gang.rendezvous != Rendezvous::kPyTorch && j.gang.rendezvous != Rendezvous::kTensorFlow) {
    return;
  }
  auto add = [&](TaskSpec& t) {
    if (std::find(t.ports.begin(), t.ports.end(), j.gang.port) == t.ports.end()) {
      t.ports.push_back(j.gang.port);
    }
  };
  add(j.task);
  for (RoleSpec& role : j.roles) add(role.task);
  for (auto it = j.instance_overrides.begin(); it != j.instance_overrides.end();) {
    add(it->second.task);
    if (it->second.task == j.BaseTaskFor(it->first)) {
      it = j.instance_overrides.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

PoolSpec RandomPoolSpec(Rng& rng) {
  PoolSpec p;
  if (Chance(rng, 50)) p.description = Text(rng);
  p.type = Chance(rng, 30) ? PoolType::kStatic : PoolType::kElastic;
  for (Dim d : kAllDims) {
    if (Chance(rng, 30)) continue;
    DimSpec& ds = p.dim(d);
    int64_t a = d == Dim::kMemory || d == Dim::kDisk ? RandomBytes(rng)
                : d == Dim::kGpu                     ? Uniform(rng, 0, 64) * kMilliPerUnit
                                                     : Uniform(rng, 0, 1000000);
    ds.reservation = Chance(rng, 20) ? 0 : a;
    ds.limit = Chance(rng, 30) ? kUnlimited : ds.reservation + Uniform(rng, 0, 1) * a;
    ds.share = Chance(rng, 50) ? static_cast<double>(Uniform(rng, 1, 10))
                               : std::uniform_real_distribution<double>(1e-6, 1e6)(rng);
  }
  auto percent = [&]() -> std::optional<double> {
    if (Chance(rng, 50)) return std::nullopt;
    if (Chance(rng, 50)) return static_cast<double>(Uniform(rng, 1, 100));
    return std::uniform_real_distribution<double>(1e-3, 100)(rng);
  };
  p.controller_limit_percent = percent();
  p.slack_limit_percent = percent();
  if (Chance(rng, 20)) p.fair_share = FairShareSpec{absl::Minutes(Uniform(rng, 1, 525600))};
  return p;
}

JobSpec RandomJobSpec(Rng& rng) {
  JobSpec j;
  j.name = Word(rng, kAlnum, "abcdefghijklmnopqrstuvwxyz0123456789-._", 20);
  if (Chance(rng, 50)) j.description = Text(rng);
  if (Chance(rng, 50)) j.owner = Line(rng);
  j.type = static_cast<JobType>(Uniform(rng, 0, 3));
  if (j.type != JobType::kDaemon) {
    j.instances = Chance(rng, 5) ? kMaxInstances : static_cast<uint32_t>(Uniform(rng, 1, 5000));
  }
  j.priority =
      static_cast<int32_t>(Chance(rng, 10) ? (Chance(rng, 50) ? kMinPriority : kMaxPriority)
                                           : Uniform(rng, -1000, 1000));
  for (int64_t i = Uniform(rng, 0, 3); i > 0; --i) {
    j.labels[Word(rng, kAlnum, "abcdef._-/", 12)] = Line(rng);
  }
  SlaSpec& s = j.sla;
  if (Chance(rng, 60)) {
    s.revocable = Chance(rng, 30);
    s.preemptible = s.revocable || Chance(rng, 50);
    uint32_t cap = j.type == JobType::kDaemon ? 5 : std::min<uint32_t>(j.instances, 50);
    s.min_running_instances = static_cast<uint32_t>(Uniform(rng, 1, cap));
    s.max_running_instances =
        Chance(rng, 50) ? 0 : s.min_running_instances + static_cast<uint32_t>(Uniform(rng, 0, 100));
    if (Chance(rng, 50)) s.max_running_time = RandomDuration(rng);
    if (Chance(rng, 30)) {
      s.expected_running_time =
          s.max_running_time > absl::ZeroDuration() && Chance(rng, 70)
              ? absl::Trunc(s.max_running_time / Uniform(rng, 1, 4), absl::Seconds(1))
              : RandomDuration(rng);
      if (s.max_running_time > absl::ZeroDuration() &&
          s.expected_running_time > s.max_running_time) {
        s.expected_running_time = s.max_running_time;
      }
    }
    s.max_unavailable_instances = static_cast<uint32_t>(Uniform(rng, 0, 10));
  }
  j.task = RandomTask(rng, j);
  if (j.type != JobType::kBatch && Chance(rng, 50)) {
    j.update.batch_size = static_cast<uint32_t>(Uniform(rng, 1, 100));
    j.update.max_failures = static_cast<uint32_t>(Uniform(rng, 0, 10));
    j.update.rollback_on_failure = Chance(rng, 50);
    j.update.in_place = Chance(rng, 50);
    j.update.min_healthy_time = Chance(rng, 20) ? absl::ZeroDuration() : RandomDuration(rng);
  }
  if (j.type != JobType::kDaemon && Chance(rng, 25)) AddRoles(rng, j);
  if (j.type == JobType::kBatch && j.instances >= 2 && Chance(rng, 25)) AddGang(rng, j);
  if (j.type == JobType::kBatch && Chance(rng, 20)) j.completion = Completion::kInstanceZero;
  if (j.type != JobType::kDaemon) {
    for (int64_t i = Uniform(rng, 0, 3); i > 0; --i) {
      uint32_t index = static_cast<uint32_t>(Uniform(rng, 0, j.instances - 1));
      j.OverrideTask(index) = DeriveTask(rng, j, j.BaseTaskFor(index));
    }
  }
  if (j.type != JobType::kDaemon && Chance(rng, 20)) {
    for (int64_t i = Uniform(rng, 1, 4); i > 0; --i) {
      JobDependency dep;
      dep.job = Chance(rng, 50) ? absl::StrCat(Uniform(rng, 1, 1'000'000'000))
                                : Word(rng, "abcdefghijklmnopqrstuvwxyz",
                                       "abcdefghijklmnopqrstuvwxyz0123456789-._", 20);
      dep.condition = static_cast<DependencyCondition>(Uniform(rng, 0, 2));
      bool repeat = false;
      for (const JobDependency& d : j.depends_on) repeat |= d.job == dep.job;
      if (!repeat) j.depends_on.push_back(std::move(dep));
    }
  }
  if (j.type == JobType::kBatch && j.depends_on.empty() && Chance(rng, 20)) {
    static constexpr std::array<const char*, 6> kCrons = {"*/5 * * * *",  "0 3 * * MON-FRI",
                                                          "@daily",       "*/2 * * * * *",
                                                          "0 0 13 * FRI", "30 2 1 1,7 *"};
    static constexpr std::array<const char*, 3> kZones = {"UTC", "Europe/Berlin",
                                                          "America/New_York"};
    ScheduleSpec s;
    s.cron = kCrons[static_cast<size_t>(Uniform(rng, 0, kCrons.size() - 1))];
    s.time_zone = kZones[static_cast<size_t>(Uniform(rng, 0, kZones.size() - 1))];
    s.concurrency = static_cast<ConcurrencyPolicy>(Uniform(rng, 0, 2));
    if (Chance(rng, 50)) s.starting_deadline = absl::Seconds(Uniform(rng, 1, 86'400));
    s.keep_succeeded = static_cast<uint32_t>(Uniform(rng, 0, 10));
    s.keep_failed = static_cast<uint32_t>(Uniform(rng, 0, 10));
    s.suspend = Chance(rng, 20);
    j.schedule = s;
  }
  AddRendezvousPort(j);
  return j;
}

}  // namespace paceline
