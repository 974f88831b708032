#include "bench/scale_bench.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/grpc_agent_fleet.h"
#include "bench/inproc_fleet.h"
#include "bench/list_prober.h"
#include "bench/local_master.h"
#include "common/status.h"
#include "masterd/cluster.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::bench {
namespace {

constexpr const char* kScalePool = "/scale";

// Records when each task's RUNNING was acknowledged; lock-free, preallocated.
class RunningRecorder final : public FleetObserver {
 public:
  explicit RunningRecorder(size_t capacity) : records_(capacity) {
    for (Record& r : records_) r = Record{};  // touch every page before the baseline
  }
  void OnAcked(const RunId& run, FakeRunState state, absl::Time, absl::Time acked) override {
    if (state != FakeRunState::kRunning) return;
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < records_.size()) records_[i] = Record{run.task.job.value(), acked};
  }
  size_t size() const { return std::min(next_.load(), records_.size()); }

  struct Record {
    uint64_t job = 0;
    absl::Time acked;
  };
  const std::vector<Record>& records() const { return records_; }

 private:
  std::vector<Record> records_;
  std::atomic<size_t> next_{0};
};

// The job sizes to submit: `tasks` in all, split by the mix, shuffled with the seed.
absl::StatusOr<std::vector<uint32_t>> JobSizes(const ScaleBenchConfig& c) {
  std::vector<uint32_t> sizes;
  int64_t left = c.tasks;
  for (const auto& [size, share] : c.job_mix) {
    if (size == 0 || share < 0) return absl::InvalidArgumentError("job mix: size 0 or share < 0");
    int64_t n = static_cast<int64_t>(static_cast<double>(c.tasks) * share) / size;
    for (int64_t i = 0; i < n && left >= size; ++i, left -= size) sizes.push_back(size);
  }
  while (left > 0) {  // what the rounding left, in jobs of the smallest size
    uint32_t smallest = c.job_mix.empty() ? 1 : c.job_mix.front().first;
    uint32_t n = static_cast<uint32_t>(std::min<int64_t>(left, smallest));
    sizes.push_back(n);
    left -= n;
  }
  std::shuffle(sizes.begin(), sizes.end(), std::mt19937_64(c.seed));
  return sizes;
}

std::string JobSpec(size_t index, uint32_t instances) {
  return absl::StrCat("name: scale-", index, "\ntype: batch\ninstances: ", instances,
                      "\nsla: {preemptible: true}\ntask:\n  command: \"true\"\n",
                      "  resources: {cpu: 1, memory: 1Gi}\n");
}

struct Submitted {
  uint64_t job = 0;
  absl::Time sent;
};

struct SubmitResult {
  std::vector<Submitted> jobs;
  int64_t errors = 0;
  std::string first_error;
  absl::Time last_answer = absl::InfinitePast();
  absl::Duration cpu;  // the clients' threads
};

// `clients` threads, each on its own connection, create the jobs in order of a shared index.
SubmitResult Submit(const std::string& addr, const std::string& token,
                    const std::vector<uint32_t>& sizes, int clients) {
  std::atomic<size_t> next{0};
  std::vector<SubmitResult> results(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      grpc::ChannelArguments args;
      args.SetInt("paceline.bench_client", c);  // a connection of its own
      auto stub = v1::JobService::NewStub(
          grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args));
      SubmitResult& out = results[c];
      for (size_t i = next++; i < sizes.size(); i = next++) {
        v1::CreateJobRequest req;
        req.set_pool(kScalePool);
        req.set_spec_yaml(JobSpec(i, sizes[i]));
        v1::CreateJobResponse resp;
        absl::Time sent = absl::Now();
        grpc::Status s = stub->CreateJob(ClientContext(token).get(), req, &resp);
        out.last_answer = absl::Now();
        if (s.ok()) {
          out.jobs.push_back({resp.job_id(), sent});
        } else if (out.errors++ == 0) {
          out.first_error = s.error_message();
        }
      }
      out.cpu = ThisThreadCpu();
    });
  }
  for (std::thread& t : threads) t.join();
  SubmitResult all;
  for (SubmitResult& r : results) {
    all.jobs.insert(all.jobs.end(), r.jobs.begin(), r.jobs.end());
    all.errors += r.errors;
    if (all.first_error.empty()) all.first_error = r.first_error;
    all.last_answer = std::max(all.last_answer, r.last_answer);
    all.cpu += r.cpu;
  }
  return all;
}

int64_t CountRunning(masterd::Cluster& cluster) {
  return cluster.Read<int64_t>([](const scheduler::SchedulerCore& core) {
    int64_t n = 0;
    core.jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
      n += job.count(TaskState::kRunning);
      return true;
    });
    return n;
  });
}

int64_t DirectoryBytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += static_cast<int64_t>(e.file_size(ec));
  }
  return total;
}

// The emulated hosts, on either transport.
class Fleet {
 public:
  static absl::StatusOr<std::unique_ptr<Fleet>> Start(const ScaleBenchConfig& c, LocalMaster& m,
                                                      FleetObserver* observer) {
    auto f = std::unique_ptr<Fleet>(new Fleet());
    std::vector<FakeHostSpec> hosts =
        UniformHosts(c.hosts, "host", Capacity(c.host_cpu_milli, c.host_memory_bytes));
    if (c.transport == FleetTransport::kInProcess) {
      InProcessFleetConfig fc;
      fc.hosts = std::move(hosts);
      fc.agent.observer = observer;
      fc.threads = c.fleet_threads;
      ASSIGN_OR_RETURN(f->inproc_,
                       InProcessAgentFleet::Start(m.master().cluster(), c.heartbeat_interval, fc));
    } else {
      GrpcFleetConfig fc;
      fc.master_addr = m.addr();
      fc.token = m.agent_token();
      fc.hosts = std::move(hosts);
      fc.agent.observer = observer;
      fc.agent.batches = c.batches;
      fc.threads = c.fleet_threads;
      ASSIGN_OR_RETURN(f->grpc_, GrpcAgentFleet::Start(fc));
      RETURN_IF_ERROR(f->grpc_->WaitRegistered(c.timeout));
    }
    return f;
  }

  // The emulated hosts' heap (in process only; 0 over gRPC).
  int64_t heap_bytes() const {
    return inproc_ != nullptr ? static_cast<int64_t>(inproc_->heap_bytes()) : 0;
  }

  FleetCounters counters() const {
    return inproc_ != nullptr ? inproc_->counters() : grpc_->counters();
  }

  // Restarts the master under the fleet; returns (serving, every host registered again).
  absl::StatusOr<std::pair<absl::Duration, absl::Duration>> RestartMaster(
      LocalMaster& m, const ScaleBenchConfig& c) {
    if (inproc_ != nullptr) inproc_->Detach();  // the master's connections end with it
    int64_t registrations = counters().registrations;
    absl::Time start = absl::Now();
    ASSIGN_OR_RETURN(absl::Duration serving, m.Restart());
    if (inproc_ != nullptr) {
      RETURN_IF_ERROR(inproc_->Attach(m.master().cluster(), c.heartbeat_interval));
    } else {
      absl::Time deadline = absl::Now() + c.timeout;
      while (counters().registrations < registrations + c.hosts) {
        if (absl::Now() > deadline) {
          return absl::DeadlineExceededError("the hosts did not register again after a restart");
        }
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
    return std::make_pair(serving, absl::Now() - start);
  }

 private:
  Fleet() = default;
  std::unique_ptr<InProcessAgentFleet> inproc_;
  std::unique_ptr<GrpcAgentFleet> grpc_;
};

double MsOf(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

CallLatency SummarizeCalls(std::vector<double>& ms) {
  CallLatency c;
  c.calls = static_cast<int64_t>(ms.size());
  c.p50_ms = Percentile(ms, 0.50);
  c.p99_ms = Percentile(ms, 0.99);
  c.max_ms = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
  return c;
}

nlohmann::json ToJson(const CallLatency& c) {
  return {{"calls", c.calls}, {"p50_ms", c.p50_ms}, {"p99_ms", c.p99_ms}, {"max_ms", c.max_ms}};
}

}  // namespace

absl::StatusOr<ScaleBenchReport> RunScaleBench(const ScaleBenchConfig& config) {
  if (config.hosts < 1) return absl::InvalidArgumentError("--hosts: must be at least 1");
  if (config.tasks < 1) return absl::InvalidArgumentError("--tasks: must be at least 1");
  if (config.clients < 1 || config.clients > 1000) {
    return absl::InvalidArgumentError("--clients: expected 1 to 1000");
  }
  if (config.tasks > int64_t{config.hosts} * (config.host_cpu_milli / 1000)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tasks: ", config.tasks, " tasks of 1 cpu do not fit on ", config.hosts,
                     " hosts of ", config.host_cpu_milli / 1000, " cpus"));
  }
  ASSIGN_OR_RETURN(std::vector<uint32_t> sizes, JobSizes(config));
  ScaleBenchReport report;
  report.config = config;
  const absl::Time bench_start = absl::Now();

  masterd::MasterConfig mc;
  mc.data_dir = config.data_dir;
  mc.store = config.store;
  mc.grpc_listen = HostPort{"127.0.0.1", 0};
  mc.http_listen = HostPort{"127.0.0.1", 0};
  mc.cycle = config.cycle;
  mc.heartbeat_interval = config.heartbeat_interval;
  mc.host_timeout = config.host_timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<LocalMaster> m, LocalMaster::Start(mc));
  RETURN_IF_ERROR(CreateBenchPool(m->addr(), m->token(), kScalePool));

  RunningRecorder recorder(static_cast<size_t>(config.tasks) + 1024);
  absl::Time t0 = absl::Now();
  ASSIGN_OR_RETURN(std::unique_ptr<Fleet> fleet, Fleet::Start(config, *m, &recorder));
  report.register_time = absl::Now() - t0;
  masterd::Master::TrimMemory();
  report.rss_before = ResidentBytes();
  const int64_t fleet_before = fleet->heap_bytes();

  // Submit, and follow the progress until every task runs.
  const absl::Time start = absl::Now();
  const ThreadCpu cpu_before = ThreadCpu::Sample();
  const DurationHistogram cycles_before = m->master().cluster()->CycleTimes();
  ListProber prober(m->addr(), m->token(), kScalePool, absl::Milliseconds(100));
  SubmitResult submitted;
  std::thread submitter([&] { submitted = Submit(m->addr(), m->token(), sizes, config.clients); });
  const absl::Time deadline = start + config.timeout;
  absl::Time next_sample = start;
  while (true) {
    int64_t running = fleet->counters().running_acked;
    absl::Time now = absl::Now();
    if (now >= next_sample) {
      report.progress.emplace_back(absl::ToDoubleSeconds(now - start), running);
      next_sample += absl::Seconds(1);
    }
    if (running >= config.tasks || now > deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  const ThreadCpu cpu_after = ThreadCpu::Sample();
  report.cycles = m->master().cluster()->CycleTimes().Since(cycles_before);
  ListLatencies lists = prober.Stop();
  report.job_list = SummarizeCalls(lists.job_list_ms);
  report.task_list = SummarizeCalls(lists.task_list_ms);
  report.list_errors = lists.errors;
  submitter.join();
  report.cpu = cpu_after.Since(cpu_before).WithClients(submitted.cpu);
  report.running = fleet->counters().running_acked;
  report.jobs = static_cast<int64_t>(submitted.jobs.size());
  report.submit_errors = submitted.errors;
  report.first_error = submitted.first_error;
  report.submit_time = submitted.last_answer - start;
  masterd::Master::TrimMemory();  // as the master does every 30 s: count what it holds
  report.rss_after = ResidentBytes();
  const double per = 1.0 / static_cast<double>(std::max<int64_t>(1, report.running));
  report.bytes_per_task = static_cast<double>(report.rss_after - report.rss_before) * per;
  if (config.transport == FleetTransport::kInProcess) {
    report.fleet_bytes = fleet->heap_bytes() - fleet_before;
    report.master_bytes_per_task =
        static_cast<double>(report.rss_after - report.rss_before - report.fleet_bytes) * per;
  }

  // Latencies: RUNNING acknowledged - CreateJob sent.
  absl::flat_hash_map<uint64_t, absl::Time> sent;
  for (const Submitted& s : submitted.jobs) sent[s.job] = s.sent;
  std::vector<double> ms;
  std::vector<absl::Time> acked;
  ms.reserve(recorder.size());
  acked.reserve(recorder.size());
  for (size_t i = 0; i < recorder.size(); ++i) {
    const RunningRecorder::Record& r = recorder.records()[i];
    auto it = sent.find(r.job);
    if (it == sent.end()) continue;
    ms.push_back(MsOf(r.acked - it->second));
    acked.push_back(r.acked);
  }
  std::sort(acked.begin(), acked.end());
  if (!acked.empty()) {
    report.run_time = acked.back() - start;
    report.tasks_per_second =
        static_cast<double>(acked.size()) / absl::ToDoubleSeconds(report.run_time);
    size_t lo = acked.size() / 10, hi = acked.size() * 9 / 10;
    if (hi > lo && acked[hi] > acked[lo]) {
      report.sustained_tasks_per_second =
          static_cast<double>(hi - lo) / absl::ToDoubleSeconds(acked[hi] - acked[lo]);
    }
  }
  report.p50_ms = Percentile(ms, 0.50);
  report.p90_ms = Percentile(ms, 0.90);
  report.p99_ms = Percentile(ms, 0.99);
  report.max_ms = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());

  store::GroupCommitStats cs = m->master().cluster()->CommitStats();
  report.commits = cs.commits;
  report.batches = cs.batches;
  report.commit_mean_ms =
      cs.commits == 0 ? 0 : MsOf(cs.total_commit_time) / static_cast<double>(cs.commits);
  report.commit_p50_ms = MsOf(cs.CommitTimeQuantile(0.50));
  report.commit_p99_ms = MsOf(cs.CommitTimeQuantile(0.99));
  report.commit_max_ms = MsOf(cs.max_commit_time);
  report.store_bytes = DirectoryBytes(m->data_dir());

  if (config.restart && report.running == config.tasks) {
    ASSIGN_OR_RETURN(auto times, fleet->RestartMaster(*m, config));
    report.restart_serving = times.first;
    report.restart_registered = times.second;
    report.running_after_restart = CountRunning(*m->master().cluster());
    masterd::Master::TrimMemory();
    report.rss_after_restart = ResidentBytes();
  }
  report.fleet = fleet->counters();
  fleet.reset();
  m->Stop();
  report.wall = absl::Now() - bench_start;
  if (report.running < config.tasks) {
    return absl::DeadlineExceededError(
        absl::StrCat(report.running, " of ", config.tasks, " tasks running after ",
                     absl::FormatDuration(config.timeout),
                     report.first_error.empty() ? "" : "; first error: ", report.first_error));
  }
  return report;
}

std::map<std::string, double> CpuUsPerTask(const ScaleBenchReport& r) {
  const double n = static_cast<double>(std::max<int64_t>(1, r.running));
  std::map<std::string, double> out = {{"total", absl::ToDoubleMicroseconds(r.cpu.total) / n}};
  for (const auto& [role, t] : r.cpu.by_role) out[role] = absl::ToDoubleMicroseconds(t) / n;
  return out;
}

nlohmann::json ToJson(const ScaleBenchReport& r) {
  const ScaleBenchConfig& c = r.config;
  nlohmann::json mix = nlohmann::json::array();
  for (const auto& [size, share] : c.job_mix) mix.push_back({{"size", size}, {"share", share}});
  nlohmann::json progress = nlohmann::json::array();
  for (const auto& [s, n] : r.progress) progress.push_back({s, n});
  const FleetCounters& f = r.fleet;
  return {
      {"benchmark", "scale"},
      {"config",
       {{"transport", c.transport == FleetTransport::kInProcess ? "in-process" : "grpc"},
        {"hosts", c.hosts},
        {"tasks", c.tasks},
        {"job_mix", mix},
        {"clients", c.clients},
        {"batches", c.batches},
        {"host_cpu_milli", c.host_cpu_milli},
        {"host_memory_bytes", c.host_memory_bytes},
        {"heartbeat_interval_s", absl::ToDoubleSeconds(c.heartbeat_interval)},
        {"cycle_ms", MsOf(c.cycle)},
        {"seed", c.seed}}},
      {"register_s", absl::ToDoubleSeconds(r.register_time)},
      {"jobs", r.jobs},
      {"submit_errors", r.submit_errors},
      {"first_error", r.first_error},
      {"submit_s", absl::ToDoubleSeconds(r.submit_time)},
      {"run_s", absl::ToDoubleSeconds(r.run_time)},
      {"running", r.running},
      {"tasks_per_second", r.tasks_per_second},
      {"sustained_tasks_per_second", r.sustained_tasks_per_second},
      {"submit_to_running_ms",
       {{"p50", r.p50_ms}, {"p90", r.p90_ms}, {"p99", r.p99_ms}, {"max", r.max_ms}}},
      {"progress", progress},
      {"memory",
       {{"rss_before_bytes", r.rss_before},
        {"rss_after_bytes", r.rss_after},
        {"bytes_per_task", r.bytes_per_task},
        {"emulated_hosts_bytes", r.fleet_bytes},
        {"master_bytes_per_task", r.master_bytes_per_task},
        {"rss_after_restart_bytes", r.rss_after_restart}}},
      {"cpu_us_per_task", CpuUsPerTask(r)},
      {"cycles",
       {{"count", r.cycles.count},
        {"mean_ms", MsOf(r.cycles.Mean())},
        {"p50_ms_at_most", MsOf(r.cycles.Quantile(0.5))},
        {"p99_ms_at_most", MsOf(r.cycles.Quantile(0.99))},
        {"max_ms", MsOf(r.cycles.max)}}},
      {"store",
       {{"commits", r.commits},
        {"batches", r.batches},
        {"commit_mean_ms", r.commit_mean_ms},
        {"commit_p50_ms_at_most", r.commit_p50_ms},
        {"commit_p99_ms_at_most", r.commit_p99_ms},
        {"commit_max_ms", r.commit_max_ms},
        {"backend", r.config.store.empty() ? "sqlite" : "postgres"},
        {"bytes", r.store_bytes}}},
      {"lists",
       {{"job_list", ToJson(r.job_list)},
        {"task_list", ToJson(r.task_list)},
        {"errors", r.list_errors}}},
      {"restart",
       {{"serving_s", absl::ToDoubleSeconds(r.restart_serving)},
        {"all_hosts_registered_s", absl::ToDoubleSeconds(r.restart_registered)},
        {"running_after", r.running_after_restart}}},
      {"fleet",
       {{"hosts", f.hosts},
        {"registrations", f.registrations},
        {"reconnects", f.reconnects},
        {"stream_errors", f.stream_errors},
        {"last_error", f.last_error},
        {"launches", f.launches},
        {"running_acked", f.running_acked},
        {"messages_in", f.messages_in},
        {"messages_out", f.messages_out},
        {"batches_in", f.batches_in},
        {"batches_out", f.batches_out}}},
      {"wall_s", absl::ToDoubleSeconds(r.wall)},
  };
}

}  // namespace paceline::bench
