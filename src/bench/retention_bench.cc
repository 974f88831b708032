#include "bench/retention_bench.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "archive/archive_writer.h"
#include "bench/local_master.h"
#include "common/status.h"
#include "masterd/retention_worker.h"
#include "scheduler/scheduler_core.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::bench {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
const absl::Time kStart = absl::FromUnixSeconds(1'795'651'200);  // 2026-11-26T00:00:00Z

Distribution Summarize(const std::vector<absl::Duration>& v) {
  Distribution d;
  d.count = static_cast<int64_t>(v.size());
  std::vector<double> ms;
  ms.reserve(v.size());
  for (absl::Duration x : v) ms.push_back(absl::ToDoubleMilliseconds(x));
  d.p50 = absl::Milliseconds(Percentile(ms, 0.5));
  d.p99 = absl::Milliseconds(Percentile(ms, 0.99));
  d.max = absl::Milliseconds(Percentile(ms, 1.0));
  return d;
}

// The files of the store in `dir` (the database, its WAL), not the archive.
int64_t StoreBytes(const std::string& dir) {
  int64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) total += static_cast<int64_t>(e.file_size());
  }
  return total;
}

int64_t DirBytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file()) total += static_cast<int64_t>(e.file_size());
  }
  return total;
}

int64_t Rows(const store::StoreStats& s, const std::string& table) {
  for (const auto& [t, n] : s.rows) {
    if (t == table) return n;
  }
  return 0;
}

class Run {
 public:
  Run(const RetentionBenchConfig& c, std::string dir)
      : c_(c), dir_(std::move(dir)), archive_(dir_ + "/archive") {}

  absl::StatusOr<RetentionBenchReport> Go() {
    const absl::Time wall_start = absl::Now();
    ASSIGN_OR_RETURN(store_, store::SqliteStore::Open(dir_));
    scheduler::CoreConfig config;
    config.retain_terminal = c_.window;
    config.host_timeout = absl::Hours(1);
    ASSIGN_OR_RETURN(core_, scheduler::SchedulerCore::Create(config));
    RETURN_IF_ERROR(Setup());
    const int64_t steps = c_.span / c_.step;
    const double tasks_per_step = static_cast<double>(c_.tasks) / static_cast<double>(steps);
    double owed = 0;
    std::vector<scheduler::Launch> running;
    for (int64_t i = 0; i < steps; ++i) {
      now_ = kStart + i * c_.step;
      pending_.clear();
      for (int h = 0; h < c_.hosts; ++h) core_->agents().Heartbeat(HostName(h), now_);
      for (const scheduler::Launch& l : running) Report(l, TaskState::kSucceeded);
      report_.finished_tasks += static_cast<int64_t>(running.size());
      owed += tasks_per_step;
      while (owed >= c_.job_size && submitted_ < c_.tasks) {
        RETURN_IF_ERROR(Submit());
        owed -= c_.job_size;
      }
      const bool retiring = (now_ - kStart) % c_.retire_every == absl::ZeroDuration();
      scheduler::Actions cycle;
      const absl::Time t0 = absl::Now();
      core_->RunCycle(now_, cycle);
      (retiring ? cycles_retiring_ : cycles_quiet_).push_back(absl::Now() - t0);
      running = cycle.launches;
      pending_.push_back(std::move(cycle.batch));
      for (const scheduler::Launch& l : running) Report(l, TaskState::kRunning);
      RETURN_IF_ERROR(CommitPending());
      if (retiring) RETURN_IF_ERROR(Retire());
      if ((now_ - kStart) % c_.sample_every == absl::ZeroDuration() || i == steps - 1) {
        RETURN_IF_ERROR(Sample());
      }
    }
    RETURN_IF_ERROR(Restart());
    report_.config = c_;
    report_.cycle_quiet = Summarize(cycles_quiet_);
    report_.cycle_retiring = Summarize(cycles_retiring_);
    report_.purge_on_loop = Summarize(purges_);
    report_.retire_on_store = Summarize(store_work_);
    report_.commit = Summarize(commits_);
    report_.wall = absl::Now() - wall_start;
    return report_;
  }

 private:
  static std::string HostName(int h) { return absl::StrCat("host-", h); }

  absl::Status Setup() {
    scheduler::Actions a;
    PoolSpec pool;
    pool.dim(Dim::kCpu).reservation = int64_t{c_.hosts} * 64'000;
    pool.dim(Dim::kMemory).reservation = int64_t{c_.hosts} * 256 * kGi;
    RETURN_IF_ERROR(core_->pools().CreatePool("/bench", pool, a));
    for (int h = 0; h < c_.hosts; ++h) {
      scheduler::HostRegistration reg;
      reg.name = HostName(h);
      reg.capacity = Resources::Of(64'000, 256 * kGi, 1024 * kGi);
      reg.ports = {{31000, 31999}};
      RETURN_IF_ERROR(core_->agents().RegisterHost(reg, {}, kStart, a));
    }
    return store_->Commit(a.batch);
  }

  absl::Status Submit() {
    JobSpec spec;
    spec.name = "sweep";
    spec.instances = c_.job_size;
    spec.task.command = "true";
    spec.task.resources = Resources::Of(1000, kGi);
    scheduler::Actions a;
    RETURN_IF_ERROR(core_->job_control().CreateJob(spec, "/bench", now_, a).status());
    submitted_ += c_.job_size;
    pending_.push_back(std::move(a.batch));
    return absl::OkStatus();
  }

  void Report(const scheduler::Launch& l, TaskState state) {
    scheduler::Actions a;
    core_->agents().OnStatus({l.run, l.host, state, state == TaskState::kSucceeded ? 0 : -1}, now_,
                             a);
    pending_.push_back(std::move(a.batch));
  }

  absl::Status CommitPending() {
    std::vector<const records::WriteBatch*> batches;
    for (const records::WriteBatch& b : pending_) batches.push_back(&b);
    const absl::Time t0 = absl::Now();
    RETURN_IF_ERROR(store_->CommitAll(batches));
    commits_.push_back(absl::Now() - t0);
    pending_.clear();
    return absl::OkStatus();
  }

  // The master's worker, on this thread: batches until no job has expired.
  absl::Status Retire() {
    masterd::RetirePorts ports;
    ports.expired = [&](size_t limit) { return core_->retention().Expired(now_, limit); };
    absl::Duration on_store;
    ports.read_store = [&](const std::function<void(store::Store&)>& read) {
      const absl::Time t0 = absl::Now();
      read(*store_);
      on_store += absl::Now() - t0;
    };
    ports.purge = [&](const std::vector<JobId>& jobs) -> absl::StatusOr<std::vector<JobId>> {
      scheduler::Actions a;
      const absl::Time t0 = absl::Now();
      std::vector<JobId> purged = core_->job_control().PurgeExpired(jobs, now_, a);
      purges_.push_back(absl::Now() - t0);
      const absl::Time t1 = absl::Now();
      RETURN_IF_ERROR(store_->Commit(a.batch));
      on_store += absl::Now() - t1;
      return purged;
    };
    while (true) {
      on_store = absl::ZeroDuration();
      ASSIGN_OR_RETURN(masterd::RetiredBatch b,
                       masterd::RetireBatch(ports, archive_, c_.batch_jobs, c_.batch_tasks, now_));
      if (b.jobs == 0) return absl::OkStatus();
      store_work_.push_back(on_store);
      report_.archived_jobs += static_cast<int64_t>(b.jobs);
      report_.archived_tasks += static_cast<int64_t>(b.tasks);
    }
  }

  absl::Status Sample() {
    ASSIGN_OR_RETURN(store::StoreStats s, store_->Stats());
    RetentionSample r;
    r.at = now_ - kStart;
    r.live_jobs = Rows(s, "jobs");
    r.live_tasks = Rows(s, "tasks");
    r.live_events = Rows(s, "events");
    r.store_bytes = StoreBytes(dir_);
    r.archive_bytes = DirBytes(dir_ + "/archive");
    r.finished_tasks = report_.finished_tasks;
    report_.samples.push_back(r);
    return absl::OkStatus();
  }

  // What a master does when it starts: open the store, load it, rebuild the core.
  absl::Status Restart() {
    store_.reset();
    core_.reset();
    const absl::Time t0 = absl::Now();
    ASSIGN_OR_RETURN(store_, store::SqliteStore::Open(dir_));
    ASSIGN_OR_RETURN(records::StoreContents contents, store_->Load());
    report_.restart_load = absl::Now() - t0;
    scheduler::CoreConfig config;
    config.retain_terminal = c_.window;
    ASSIGN_OR_RETURN(core_, scheduler::SchedulerCore::Create(config));
    scheduler::Actions a;
    RETURN_IF_ERROR(core_->Restore(contents, now_, a));
    report_.restart = absl::Now() - t0;
    report_.restart_tasks = static_cast<int64_t>(contents.tasks.size());
    return absl::OkStatus();
  }

  const RetentionBenchConfig c_;
  const std::string dir_;
  archive::ArchiveWriter archive_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<scheduler::SchedulerCore> core_;
  absl::Time now_ = kStart;
  int64_t submitted_ = 0;
  std::vector<records::WriteBatch> pending_;
  std::vector<absl::Duration> cycles_quiet_, cycles_retiring_, purges_, store_work_, commits_;
  RetentionBenchReport report_;
};

nlohmann::json DistJson(const Distribution& d) {
  return {{"count", d.count},
          {"p50_ms", absl::ToDoubleMilliseconds(d.p50)},
          {"p99_ms", absl::ToDoubleMilliseconds(d.p99)},
          {"max_ms", absl::ToDoubleMilliseconds(d.max)}};
}

}  // namespace

absl::StatusOr<RetentionBenchReport> RunRetentionBench(const RetentionBenchConfig& config) {
  if (config.tasks <= 0 || config.job_size == 0 || config.step <= absl::ZeroDuration() ||
      config.span < config.step || config.retire_every < config.step ||
      config.sample_every < config.step || config.hosts <= 0) {
    return absl::InvalidArgumentError(
        "retention bench: tasks, job size and hosts must be positive, and span, retire_every "
        "and sample_every at least one step");
  }
  std::string dir = config.data_dir;
  const bool temporary = dir.empty();
  if (temporary) {
    dir = absl::StrCat(std::filesystem::temp_directory_path().string(), "/paceline-retention-",
                       ::getpid());
  }
  std::filesystem::create_directories(dir);
  absl::StatusOr<RetentionBenchReport> r = Run(config, dir).Go();
  if (temporary) std::filesystem::remove_all(dir);
  return r;
}

nlohmann::json ToJson(const RetentionBenchReport& r) {
  nlohmann::json samples = nlohmann::json::array();
  for (const RetentionSample& s : r.samples) {
    samples.push_back({{"hours", absl::ToDoubleHours(s.at)},
                       {"finished_tasks", s.finished_tasks},
                       {"live_jobs", s.live_jobs},
                       {"live_tasks", s.live_tasks},
                       {"live_events", s.live_events},
                       {"store_bytes", s.store_bytes},
                       {"archive_bytes", s.archive_bytes}});
  }
  const RetentionBenchConfig& c = r.config;
  return {{"benchmark", "retention"},
          {"config",
           {{"tasks", c.tasks},
            {"span_hours", absl::ToDoubleHours(c.span)},
            {"retain_terminal_hours", absl::ToDoubleHours(c.window)},
            {"job_size", c.job_size},
            {"step_seconds", absl::ToDoubleSeconds(c.step)},
            {"retire_every_seconds", absl::ToDoubleSeconds(c.retire_every)},
            {"batch_jobs", c.batch_jobs},
            {"batch_tasks", c.batch_tasks},
            {"hosts", c.hosts}}},
          {"finished_tasks", r.finished_tasks},
          {"archived_jobs", r.archived_jobs},
          {"archived_tasks", r.archived_tasks},
          {"samples", samples},
          {"cycle_quiet", DistJson(r.cycle_quiet)},
          {"cycle_retiring", DistJson(r.cycle_retiring)},
          {"purge_on_loop", DistJson(r.purge_on_loop)},
          {"retire_on_store", DistJson(r.retire_on_store)},
          {"commit", DistJson(r.commit)},
          {"restart_ms", absl::ToDoubleMilliseconds(r.restart)},
          {"restart_load_ms", absl::ToDoubleMilliseconds(r.restart_load)},
          {"restart_tasks", r.restart_tasks},
          {"wall_seconds", absl::ToDoubleSeconds(r.wall)}};
}

}  // namespace paceline::bench
