#include "bench/container_bench.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/file_util.h"
#include "agent/task_runtime.h"
#include "common/status.h"
#include "image/archive_source.h"
#include "spdlog/spdlog.h"
#include "spec/image_ref.h"

namespace paceline::bench {
namespace {

using agent::LaunchRequest;
using agent::TaskEvent;
using agent::TaskRuntime;

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// ---- CPU accounting --------------------------------------------------------------------------

struct CpuSnapshot {
  double self_ms = 0;
  double below_ms = 0;
  int64_t cgroup_usec = -1;
};

double TimevalMs(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + t.tv_usec / 1e3; }

// utime + stime + cutime + cstime of `pid` in ms; 0 when it is gone.
double ProcTreeMs(const std::string& pid) {
  absl::StatusOr<std::string> stat = agent::ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return 0;
  size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> f = absl::StrSplit(stat->substr(paren + 2), ' ');
  // After "pid (comm) ": state is field 3, utime 14 .. cstime 17 (1-based in proc(5)).
  double ticks = 0;
  for (size_t i = 11; i <= 14 && i < f.size(); ++i) {
    int64_t v = 0;
    if (absl::SimpleAtoi(f[i], &v)) ticks += static_cast<double>(v);
  }
  return ticks * 1e3 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

class CpuMeter {
 public:
  // `cgroup_file`: the agent cgroup's cpuacct.usage (v1, ns) or cpu.stat (v2, usage_usec).
  explicit CpuMeter(std::string cgroup_file) : cgroup_file_(std::move(cgroup_file)) {}

  CpuSnapshot Take() const {
    CpuSnapshot s;
    rusage self, children;
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    s.self_ms = TimevalMs(self.ru_utime) + TimevalMs(self.ru_stime);
    // Waited-for descendants, plus the live children (the wrapper zygote) with what they
    // waited for themselves (the wrappers, and through them crun and the tasks).
    s.below_ms = TimevalMs(children.ru_utime) + TimevalMs(children.ru_stime);
    std::string self_pid = absl::StrCat(::getpid());
    absl::StatusOr<std::string> kids =
        agent::ReadFile(absl::StrCat("/proc/self/task/", self_pid, "/children"));
    if (kids.ok()) {
      for (absl::string_view pid : absl::StrSplit(*kids, ' ', absl::SkipWhitespace())) {
        s.below_ms += ProcTreeMs(std::string(pid));
      }
    }
    s.cgroup_usec = CgroupUsec();
    return s;
  }

  static void Add(const CpuSnapshot& a, const CpuSnapshot& b, CpuPerRun* sum) {
    sum->agent_ms += b.self_ms - a.self_ms;
    sum->below_ms += b.below_ms - a.below_ms;
    if (a.cgroup_usec >= 0 && b.cgroup_usec >= 0) {
      sum->cgroups_ms = std::max(0.0, sum->cgroups_ms) + (b.cgroup_usec - a.cgroup_usec) / 1e3;
    }
  }

 private:
  int64_t CgroupUsec() const {
    if (cgroup_file_.empty()) return -1;
    absl::StatusOr<std::string> text = agent::ReadFile(cgroup_file_);
    if (!text.ok()) return -1;
    int64_t v = 0;
    if (absl::EndsWith(cgroup_file_, "cpu.stat")) {
      for (absl::string_view line : absl::StrSplit(*text, '\n')) {
        if (absl::ConsumePrefix(&line, "usage_usec ") && absl::SimpleAtoi(line, &v)) return v;
      }
      return -1;
    }
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &v) ? v / 1000 : -1;
  }

  std::string cgroup_file_;
};

// Where the agent's cgroup (hierarchical, so it keeps what removed task cgroups used) counts CPU.
std::string AgentCgroupCpuFile(const agent::AgentConfig& c, agent::CgroupMode mode) {
  std::string rel = c.cgroup_parent.empty() ? "" : absl::StrCat("/", c.cgroup_parent);
  absl::StrAppend(&rel, "/paceline.", c.name);
  if (mode == agent::CgroupMode::kV2) return absl::StrCat(c.cgroup_root, rel, "/cpu.stat");
  if (mode != agent::CgroupMode::kV1) return "";
  for (const char* h : {"cpuacct", "cpu,cpuacct", "cpuacct,cpu"}) {
    std::string f = absl::StrCat(c.cgroup_root, "/", h, rel, "/cpuacct.usage");
    if (agent::PathExists(f)) return f;
  }
  return "";
}

void PerRun(CpuPerRun* cpu, int runs) {
  if (runs <= 0) return;
  cpu->agent_ms /= runs;
  cpu->below_ms /= runs;
  if (cpu->cgroups_ms >= 0) cpu->cgroups_ms /= runs;
}

// ---- the runtime and its events --------------------------------------------------------------

struct RunTimes {
  absl::Time launched;
  std::optional<absl::Time> running, ended;
  bool ok = false;
  std::string error;
};

class Harness {
 public:
  static absl::StatusOr<std::unique_ptr<Harness>> Start(agent::AgentConfig config) {
    std::unique_ptr<Harness> h(new Harness());
    ASSIGN_OR_RETURN(h->rt_, TaskRuntime::Create(std::move(config)));
    RETURN_IF_ERROR(h->rt_->Recover());
    if (h->rt_->images() == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("this host cannot run containers (OCI runtime '",
                       h->rt_->config().container_runtime, "'): apt-get install crun"));
    }
    return h;
  }

  // Nothing may outlive the benchmark: its work dir is removed next (after a failure, runs may
  // still be live, with their overlays mounted).
  ~Harness() {
    if (rt_) KillAll();
  }

  TaskRuntime& rt() { return *rt_; }
  std::map<RunId, RunTimes>& times() { return times_; }

  // Launches and records the time; the Launch() call's own duration in `call`.
  absl::Status Launch(const LaunchRequest& r, absl::Duration* call) {
    absl::Time t0 = absl::Now();
    absl::Status s = rt_->Launch(r);
    *call = absl::Now() - t0;
    RunTimes& t = times_[r.run];
    t.launched = t0;
    if (!s.ok()) {
      t.ended = t0;
      t.error = s.ToString();
    }
    return s;
  }

  void Drain() {
    std::vector<TaskEvent> events = rt_->PendingEvents();
    for (const TaskEvent& e : events) {
      RunTimes& t = times_[e.run];
      if (e.type == agent::TaskEventType::kRunning) t.running = e.time;
      if (!e.terminal() || t.ended) continue;
      t.ended = e.time;
      t.ok = e.type == agent::TaskEventType::kExited && e.exit_code == 0;
      if (!t.ok) t.error = e.ToString();
    }
    if (!events.empty()) rt_->Ack(events.back().seq).IgnoreError();
  }

  // Runs the loop until every run of `runs` has ended and is gone from the runtime.
  bool WaitGone(const std::vector<RunId>& runs, absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    size_t next = 0;  // runs before it are known gone
    while (true) {
      Drain();
      while (next < runs.size() && times_[runs[next]].ended && !rt_->GetRun(runs[next])) ++next;
      if (next == runs.size()) return true;
      if (absl::Now() >= deadline) return false;
      rt_->RunOnce(absl::Milliseconds(50));
    }
  }

  // Ends whatever still runs (after a timeout) and waits for it.
  void KillAll() {
    std::vector<RunId> runs;
    for (const agent::RunStatus& s : rt_->ListRuns()) {
      rt_->Kill(s.run, absl::ZeroDuration()).IgnoreError();
      runs.push_back(s.run);
    }
    WaitGone(runs, absl::Seconds(30));
  }

 private:
  Harness() = default;
  std::unique_ptr<TaskRuntime> rt_;
  std::map<RunId, RunTimes> times_;
};

LaunchRequest Task(uint64_t job, uint32_t instance, const std::string& command, int64_t cpu_milli,
                   int64_t memory, const std::string& image) {
  LaunchRequest r;
  r.run = RunId{TaskId{JobId(job), instance}, 1};
  r.spec.command = command;
  r.spec.resources = Resources::Of(cpu_milli, memory);
  r.spec.kill_grace = absl::Seconds(2);
  if (!image.empty()) {
    ContainerSpec c;
    c.image = image;
    r.spec.container = std::move(c);
  }
  return r;
}

agent::AgentConfig MakeAgentConfig(const ContainerBenchConfig& c, const std::string& work_dir,
                                   const std::string& suffix) {
  agent::AgentConfig a;
  a.name = absl::StrCat("bench-containers-", ::getpid(), suffix);
  a.work_dir = work_dir;
  a.wrapper_path = c.wrapper_path;
  a.container_runtime = c.container_runtime;
  a.registry_ca_file = c.registry_ca;
  a.gpus = std::vector<agent::GpuDevice>{};  // never run nvidia-smi
  a.sandbox_retention = absl::Minutes(5);
  return a;
}

// ---- the phases ------------------------------------------------------------------------------

struct Samples {
  std::vector<double> call, running, end;
};

void Record(const RunTimes& t, absl::Duration call, Samples* s) {
  s->call.push_back(Ms(call));
  if (t.running) s->running.push_back(Ms(*t.running - t.launched));
  if (t.ended) s->end.push_back(Ms(*t.ended - t.launched));
}

absl::Status RunLatency(Harness& h, const ContainerBenchConfig& c, const CpuMeter& meter,
                        ContainerBenchReport& report) {
  uint64_t job = 100;
  for (const std::string& command : c.commands) {
    LatencyGroup groups[2];
    Samples samples[2];
    uint64_t jobs[2] = {++job, ++job};
    // Plain runs, then container runs: each run follows one of its own kind. (Interleaved, a
    // run's cgroup attach is cheaper right after another one, which skews the comparison.)
    for (int k = 0; k < 2; ++k) {
      for (int i = -c.warmup; i < c.runs; ++i) {
        bool container = k == 1;
        LaunchRequest r =
            Task(jobs[k], static_cast<uint32_t>(i + c.warmup), command, c.latency_cpu_milli,
                 c.latency_memory_bytes, container ? c.image_ref : "");
        CpuSnapshot before = meter.Take();
        absl::Duration call;
        absl::Status launched = h.Launch(r, &call);
        if (launched.ok() && !h.WaitGone({r.run}, c.run_timeout)) {
          h.KillAll();
          h.times()[r.run].error =
              absl::StrCat("no end within ", absl::FormatDuration(c.run_timeout));
        }
        CpuSnapshot after = meter.Take();
        const RunTimes& t = h.times()[r.run];
        if (!t.ok && i == -c.warmup) {
          return absl::FailedPreconditionError(absl::StrCat(
              container ? "a container" : "a plain", " task `", command, "` failed: ", t.error));
        }
        if (i < 0) continue;
        LatencyGroup& g = groups[k];
        if (!t.ok) {
          if (g.failed++ == 0) g.first_error = t.error;
          continue;
        }
        Record(t, call, &samples[k]);
        CpuMeter::Add(before, after, &g.cpu);
      }
    }
    for (int k = 0; k < 2; ++k) {
      LatencyGroup& g = groups[k];
      g.command = command;
      g.container = k == 1;
      g.launch_call = Summarize(samples[k].call);
      g.to_running = Summarize(samples[k].running);
      g.to_end = Summarize(samples[k].end);
      PerRun(&g.cpu, static_cast<int>(samples[k].end.size()));
      report.latency.push_back(std::move(g));
    }
  }
  return absl::OkStatus();
}

// Most runs alive at once: a sweep over [launched, ended].
int MaxLive(const std::vector<RunTimes>& runs) {
  std::vector<std::pair<absl::Time, int>> edges;
  for (const RunTimes& t : runs) {
    edges.push_back({t.launched, 1});
    edges.push_back({t.ended.value_or(absl::InfiniteFuture()), -1});
  }
  std::sort(edges.begin(), edges.end());
  int live = 0, most = 0;
  for (const auto& [time, d] : edges) most = std::max(most, live += d);
  return most;
}

ThroughputResult RunThroughput(Harness& h, const ContainerBenchConfig& c, const CpuMeter& meter,
                               bool container) {
  ThroughputResult out;
  out.tasks = c.containers;
  const uint64_t job = container ? 900 : 901;
  std::vector<RunId> runs;
  CpuSnapshot before = meter.Take();
  absl::Time start = absl::Now();
  for (int i = 0; i < c.containers; ++i) {
    LaunchRequest r = Task(job, static_cast<uint32_t>(i), "true", c.throughput_cpu_milli,
                           c.throughput_memory_bytes, container ? c.image_ref : "");
    absl::Duration call;
    h.Launch(r, &call).IgnoreError();  // recorded as failed
    out.launching += call;
    runs.push_back(r.run);
    h.rt().Poll(absl::Now());  // reap as we go, like a live agent loop
    if (i % 100 == 99) h.Drain();
  }
  if (!h.WaitGone(runs, c.throughput_timeout)) h.KillAll();
  CpuSnapshot after = meter.Take();
  Samples s;
  std::vector<RunTimes> all;
  absl::Time last = start;
  for (const RunId& run : runs) {
    const RunTimes& t = h.times()[run];
    all.push_back(t);
    if (t.ended) last = std::max(last, *t.ended);
    if (!t.ok) {
      if (out.failed++ == 0) out.first_error = t.error;
      continue;
    }
    Record(t, absl::ZeroDuration(), &s);
  }
  out.wall = last - start;
  out.per_second = (c.containers - out.failed) / std::max(1e-9, absl::ToDoubleSeconds(out.wall));
  out.to_running = Summarize(s.running);
  out.to_end = Summarize(s.end);
  out.max_live = MaxLive(all);
  CpuMeter::Add(before, after, &out.cpu);
  PerRun(&out.cpu, c.containers);
  return out;
}

absl::StatusOr<ColdResult> RunCold(const ContainerBenchConfig& c, const std::string& base) {
  ColdResult out;
  bool registry = !c.registry.empty();
  std::string ref =
      registry ? absl::StrCat(c.registry, "/", c.cold_repository) : "bench.local/paceline/big:1";
  out.source = registry ? absl::StrCat("registry https://", ref) : "archive " + c.cold_image_file;
  Samples s;
  std::vector<double> load;
  for (int i = 0; i < c.cold_runs; ++i) {
    std::string dir = absl::StrCat(base, "/cold-", i);
    ASSIGN_OR_RETURN(std::unique_ptr<Harness> h,
                     Harness::Start(MakeAgentConfig(c, dir, absl::StrCat("-cold", i))));
    LaunchRequest r = Task(800, static_cast<uint32_t>(i), "true", c.latency_cpu_milli,
                           c.latency_memory_bytes, ref);
    absl::Time t0 = absl::Now();
    absl::Status loaded = absl::OkStatus();
    if (!registry) {  // the agent pulls only from registries: load the layout as `image load`
      absl::StatusOr<std::unique_ptr<image::ArchiveSource>> src =
          image::ArchiveSource::Open(c.cold_image_file, dir + "/scratch", "");
      loaded = src.ok() ? h->rt().images()->Pull(ref, **src).status() : src.status();
      load.push_back(Ms(absl::Now() - t0));
    }
    absl::Duration call;
    absl::Status launched = loaded.ok() ? h->Launch(r, &call) : loaded;
    if (launched.ok() && !h->WaitGone({r.run}, std::max(c.run_timeout, absl::Minutes(10)))) {
      h->KillAll();
    }
    RunTimes t = h->times()[r.run];
    if (!launched.ok()) t.error = launched.ToString();
    if (std::optional<image::CachedImage> img = h->rt().images()->Lookup(ref)) {
      out.image_bytes = img->size_bytes;
    }
    h.reset();
    agent::RemoveTree(dir).IgnoreError();
    if (!t.ok || !t.running) {
      if (out.failed++ == 0) out.first_error = t.error.empty() ? "no RUNNING event" : t.error;
      continue;
    }
    t.launched = t0;  // the archive's load counts as the pull
    Record(t, absl::ZeroDuration(), &s);
    out.each_to_running_ms.push_back(s.running.back());
  }
  out.load = Summarize(load);
  out.to_running = Summarize(s.running);
  out.to_end = Summarize(s.end);
  return out;
}

std::string LoadAverage() {
  absl::StatusOr<std::string> s = agent::ReadFile("/proc/loadavg");
  if (!s.ok()) return "";
  std::vector<absl::string_view> f = absl::StrSplit(*s, ' ');  // 1, 5 and 15 minutes, ...
  return f.size() >= 3 ? absl::StrCat(f[0], " ", f[1], " ", f[2]) : "";
}

absl::Status Validate(const ContainerBenchConfig& c) {
  if (c.image_file.empty()) return absl::InvalidArgumentError("give the image: --image-file");
  RETURN_IF_ERROR(spec::ParseImageRef(c.image_ref).status());
  if (c.runs < 0 || c.warmup < 0 || c.containers < 0 || c.cold_runs < 0) {
    return absl::InvalidArgumentError("--runs, --containers and --cold-runs must be >= 0");
  }
  if (c.runs > 0 && c.commands.empty()) return absl::InvalidArgumentError("no --command");
  if (::geteuid() != 0) {
    return absl::FailedPreconditionError(
        "containers need root (the overlay mount, crun, cgroups): run as root");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ContainerBenchReport> RunContainerBench(const ContainerBenchConfig& config) {
  RETURN_IF_ERROR(Validate(config));
  ContainerBenchReport report;
  report.config = config;
  absl::Time start = absl::Now();
  report.loadavg_start = LoadAverage();
  // The runtime logs every run at info: keep the report readable.
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  struct Restore {
    spdlog::level::level_enum level;
    ~Restore() { spdlog::set_level(level); }
  } restore{level};

  std::string base = config.work_dir;
  bool own = base.empty();
  if (own) {
    char tmpl[] = "/tmp/paceline-bench-containers-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return agent::ErrnoStatus(errno, "mkdtemp");
    base = tmpl;
  }
  RETURN_IF_ERROR(agent::MakeDirs(base, 0755));
  ::chmod(base.c_str(), 0755);  // the task user goes through it to its sandbox
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::unique_ptr<Harness> h,
                     Harness::Start(MakeAgentConfig(config, base + "/agent", "")));
    report.isolation = std::string(agent::CgroupModeName(h->rt().host().isolation));
    {
      ASSIGN_OR_RETURN(std::unique_ptr<image::ArchiveSource> src,
                       image::ArchiveSource::Open(config.image_file, base + "/scratch", ""));
      ASSIGN_OR_RETURN(
          image::CachedImage img,
          h->rt().images()->Pull(spec::ParseImageRef(config.image_ref)->ToString(), *src));
      report.image_digest = img.config_digest;
      report.image_bytes = img.size_bytes;
    }
    CpuMeter meter(AgentCgroupCpuFile(h->rt().config(), h->rt().host().isolation));
    if (config.runs > 0) RETURN_IF_ERROR(RunLatency(*h, config, meter, report));
    if (config.containers > 0) {
      report.throughput = RunThroughput(*h, config, meter, /*container=*/true);
      report.throughput_plain = RunThroughput(*h, config, meter, /*container=*/false);
    }
    h.reset();
    if (config.cold_runs == 0) {
      report.cold_skipped = "--cold-runs 0";
    } else if (config.registry.empty() && config.cold_image_file.empty()) {
      report.cold_skipped = "neither --registry nor --cold-image-file given";
    } else {
      ASSIGN_OR_RETURN(report.cold, RunCold(config, base));
    }
    return absl::OkStatus();
  }();
  if (own) agent::RemoveTree(base).IgnoreError();
  RETURN_IF_ERROR(status);
  report.wall = absl::Now() - start;
  report.loadavg_end = LoadAverage();
  return report;
}

}  // namespace paceline::bench
