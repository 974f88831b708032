#include "api/metrics.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "records/records.h"

namespace paceline::api {
namespace {

void Header(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

std::string RenderMetrics(const scheduler::SchedulerCore& core,
                          const store::GroupCommitStats& store_stats,
                          const DurationHistogram& cycle_times) {
  std::string out;
  std::array<uint64_t, kNumTaskStates> tasks{};
  std::array<uint64_t, kNumJobStates> jobs{};
  core.jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    ++jobs[static_cast<int>(job.state())];
    for (int s = 0; s < kNumTaskStates; ++s) tasks[s] += job.count(static_cast<TaskState>(s));
    return true;
  });
  Header(out, "paceline_tasks", "gauge", "Tasks by state.");
  for (int s = 0; s < kNumTaskStates; ++s) {
    absl::StrAppend(&out, "paceline_tasks{state=\"", TaskStateName(static_cast<TaskState>(s)),
                    "\"} ", tasks[s], "\n");
  }
  Header(out, "paceline_jobs", "gauge", "Jobs by state.");
  for (int s = 0; s < kNumJobStates; ++s) {
    absl::StrAppend(&out, "paceline_jobs{state=\"", JobStateName(static_cast<JobState>(s)), "\"} ",
                    jobs[s], "\n");
  }
  uint64_t connected = 0, reconnecting = 0, lost = 0;
  for (const hostmgr::TrackedHost& h : core.hosts().all()) {
    (h.connected ? connected : h.reconnecting ? reconnecting : lost)++;
  }
  Header(out, "paceline_hosts", "gauge",
         "Hosts by connection (reconnecting: known before this master started, not registered "
         "since).");
  absl::StrAppend(&out, "paceline_hosts{connected=\"true\"} ", connected, "\n",
                  "paceline_hosts{connected=\"reconnecting\"} ", reconnecting, "\n",
                  "paceline_hosts{connected=\"false\"} ", lost, "\n");

  const resmgr::Allocation& total = core.resources().total_allocation();
  const Resources allocated = total.regular() + total.revocable;
  Header(out, "paceline_cluster_capacity", "gauge",
         "Capacity of the connected hosts per resource (millicores, bytes, milli-GPUs), less "
         "what unhealthy GPU devices would have free.");
  const Resources offered = core.agents().OfferedCapacity();
  for (Dim d : kAllDims) {
    absl::StrAppend(&out, "paceline_cluster_capacity{resource=\"", DimName(d), "\"} ", offered[d],
                    "\n");
  }
  Header(out, "paceline_cluster_allocated", "gauge",
         "What every task holds per resource, revocable work included (base units).");
  for (Dim d : kAllDims) {
    absl::StrAppend(&out, "paceline_cluster_allocated{resource=\"", DimName(d), "\"} ",
                    allocated[d], "\n");
  }

  out += RenderHostMetrics(core.hosts(), core.snapshot());

  // Measured usage (soft state from the agents; hosts without a fresh report are left out).
  const absl::Time now = absl::Now();
  std::string host_used, tasks_used;
  for (const hostmgr::TrackedHost& h : core.hosts().all()) {
    std::optional<scheduler::HostUsageView> u = core.agents().HostUsage(h.spec.name, now);
    if (!u) continue;
    for (Dim d : {Dim::kCpu, Dim::kMemory}) {
      absl::StrAppend(&host_used, "paceline_host_used{host=\"", h.spec.name, "\",resource=\"",
                      DimName(d), "\"} ", u->used[d], "\n");
      absl::StrAppend(&tasks_used, "paceline_host_tasks_used{host=\"", h.spec.name,
                      "\",resource=\"", DimName(d), "\"} ", u->tasks_used[d], "\n");
    }
  }
  Header(out, "paceline_host_used", "gauge",
         "What the whole host uses, as its agent measured it (millicores, bytes).");
  out += host_used;
  Header(out, "paceline_host_tasks_used", "gauge",
         "What the host's tasks use, as its agent measured it (millicores, bytes).");
  out += tasks_used;
  Header(out, "paceline_allocated_unused", "gauge",
         "Allocated to regular tasks but measured unused: the slack offered to revocable work.");
  Resources slack = core.agents().AllocatedUnused(now);
  for (Dim d : {Dim::kCpu, Dim::kMemory}) {
    absl::StrAppend(&out, "paceline_allocated_unused{resource=\"", DimName(d), "\"} ", slack[d],
                    "\n");
  }

  const resmgr::PoolTree& tree = core.resources().tree();
  std::vector<resmgr::PoolStats> stats = core.resources().AllStats();
  struct Series {
    const char* name;
    const char* help;
    Resources (*get)(const resmgr::PoolStats&);
  };
  static const std::array<Series, 5> kSeries = {{
      {"paceline_pool_reservation", "Reservation per pool and resource (base units).",
       [](const resmgr::PoolStats& s) { return s.reservation; }},
      {"paceline_pool_limit", "Limit per pool and resource (base units).",
       [](const resmgr::PoolStats& s) { return s.limit; }},
      {"paceline_pool_entitlement", "Entitlement per pool and resource (base units).",
       [](const resmgr::PoolStats& s) { return s.entitlement; }},
      {"paceline_pool_allocation", "Allocation per pool and resource (base units).",
       [](const resmgr::PoolStats& s) { return s.allocation; }},
      {"paceline_pool_demand", "Demand per pool and resource (base units).",
       [](const resmgr::PoolStats& s) { return s.demand; }},
  }};
  for (const Series& series : kSeries) {
    Header(out, series.name, "gauge", series.help);
    for (const resmgr::PoolStats& s : stats) {
      if (!tree.Exists(s.id)) continue;
      Resources r = series.get(s);
      for (Dim d : kAllDims) {
        absl::StrAppend(&out, series.name, "{pool=\"", tree.path(s.id), "\",resource=\"",
                        DimName(d), "\"} ", r[d], "\n");
      }
    }
  }
  Header(out, "paceline_pool_queued_gangs", "gauge", "Gangs waiting in each pool's queue.");
  for (const resmgr::PoolStats& s : stats) {
    if (!tree.Exists(s.id)) continue;
    absl::StrAppend(&out, "paceline_pool_queued_gangs{pool=\"", tree.path(s.id), "\"} ",
                    s.queued_gangs, "\n");
  }
  Header(out, "paceline_placements_total", "counter", "Tasks placed since the master started.");
  absl::StrAppend(&out, "paceline_placements_total ", core.placements(), "\n");
  Header(out, "paceline_scheduling_cycles_total", "counter", "Scheduling cycles run.");
  absl::StrAppend(&out, "paceline_scheduling_cycles_total ", core.resources().cycle(), "\n");
  Header(out, "paceline_scheduling_cycle_seconds", "summary",
         "How long scheduling cycles took (quantiles within a factor of two, never under).");
  for (double q : {0.5, 0.99}) {
    absl::StrAppend(&out, "paceline_scheduling_cycle_seconds{quantile=\"", q, "\"} ",
                    absl::StrFormat("%.6f", absl::ToDoubleSeconds(cycle_times.Quantile(q))), "\n");
  }
  absl::StrAppend(&out, "paceline_scheduling_cycle_seconds_sum ",
                  absl::StrFormat("%.6f", absl::ToDoubleSeconds(cycle_times.total)), "\n");
  absl::StrAppend(&out, "paceline_scheduling_cycle_seconds_count ", cycle_times.count, "\n");
  Header(out, "paceline_scheduling_cycle_seconds_max", "gauge", "Longest scheduling cycle.");
  absl::StrAppend(&out, "paceline_scheduling_cycle_seconds_max ",
                  absl::StrFormat("%.6f", absl::ToDoubleSeconds(cycle_times.max)), "\n");
  Header(out, "paceline_store_commits_total", "counter", "Store transactions written.");
  absl::StrAppend(&out, "paceline_store_commits_total ", store_stats.commits, "\n");
  Header(out, "paceline_store_batches_total", "counter", "Change batches committed.");
  absl::StrAppend(&out, "paceline_store_batches_total ", store_stats.batches, "\n");
  Header(out, "paceline_store_failed_commits_total", "counter", "Store transactions that failed.");
  absl::StrAppend(&out, "paceline_store_failed_commits_total ", store_stats.failed_commits, "\n");
  Header(out, "paceline_store_commit_seconds_total", "counter", "Time spent committing.");
  absl::StrAppend(&out, "paceline_store_commit_seconds_total ",
                  absl::StrFormat("%.6f", absl::ToDoubleSeconds(store_stats.total_commit_time)),
                  "\n");
  Header(out, "paceline_store_commit_seconds_max", "gauge", "Longest commit so far.");
  absl::StrAppend(&out, "paceline_store_commit_seconds_max ",
                  absl::StrFormat("%.6f", absl::ToDoubleSeconds(store_stats.max_commit_time)),
                  "\n");
  Header(out, "paceline_retention_finished_jobs", "gauge",
         "Finished jobs still in the live store.");
  absl::StrAppend(&out, "paceline_retention_finished_jobs ", core.retention().finished(), "\n");
  Header(out, "paceline_archive_lag_seconds", "gauge",
         "How long the oldest expired job has waited to be archived.");
  absl::StrAppend(&out, "paceline_archive_lag_seconds ",
                  absl::StrFormat("%.3f", absl::ToDoubleSeconds(core.retention().Lag(absl::Now()))),
                  "\n");
  return out;
}

std::string RenderRetentionMetrics(const RetentionFacts& facts) {
  std::string out;
  if (facts.store) {
    Header(out, "paceline_store_rows", "gauge", "Live rows per table of the store (sampled).");
    for (const auto& [table, rows] : facts.store->rows) {
      absl::StrAppend(&out, "paceline_store_rows{table=\"", table, "\"} ", rows, "\n");
    }
    if (facts.store->bytes >= 0) {
      Header(out, "paceline_store_bytes", "gauge", "The store's size on disk (sampled).");
      absl::StrAppend(&out, "paceline_store_bytes ", facts.store->bytes, "\n");
    }
  }
  Header(out, "paceline_archive_jobs_total", "counter",
         "Jobs archived and removed from the live store.");
  absl::StrAppend(&out, "paceline_archive_jobs_total ", facts.archived_jobs, "\n");
  Header(out, "paceline_archive_bytes_total", "counter",
         "Compressed bytes written to the archive.");
  absl::StrAppend(&out, "paceline_archive_bytes_total ", facts.archived_bytes, "\n");
  Header(out, "paceline_archive_failures_total", "counter",
         "Archive batches that failed (each is retried).");
  absl::StrAppend(&out, "paceline_archive_failures_total ", facts.failures, "\n");
  return out;
}

std::string RenderUsageMetrics(const std::vector<PoolUsageCounter>& pools) {
  std::string out;
  auto family = [&](const char* name, const char* help, auto value) {
    Header(out, name, "counter", help);
    for (const PoolUsageCounter& p : pools) {
      absl::StrAppend(&out, name, "{pool=\"", p.pool, "\"} ", value(p), "\n");
    }
  };
  family("paceline_pool_usage_cpu_seconds_total",
         "Cores allocated to the pool's ended runs times their running seconds.",
         [](const PoolUsageCounter& p) { return absl::StrFormat("%.3f", p.cpu_seconds); });
  family("paceline_pool_usage_memory_byte_seconds_total",
         "Memory bytes allocated to the pool's ended runs times their running seconds.",
         [](const PoolUsageCounter& p) { return absl::StrFormat("%.0f", p.memory_byte_seconds); });
  family("paceline_pool_usage_gpu_seconds_total",
         "GPUs allocated to the pool's ended runs times their running seconds.",
         [](const PoolUsageCounter& p) { return absl::StrFormat("%.3f", p.gpu_seconds); });
  family("paceline_pool_usage_tasks_total", "Runs of the pool's jobs that ended after running.",
         [](const PoolUsageCounter& p) { return absl::StrCat(p.tasks); });
  return out;
}

std::string RenderRoleMetrics(const MasterRole& role) {
  std::string out;
  Header(out, "paceline_master_leader", "gauge",
         "1 when this master leads (or runs alone), 0 on a standby.");
  absl::StrAppend(&out, "paceline_master_leader ", role.role == "standby" ? 0 : 1, "\n");
  Header(out, "paceline_master_term", "gauge", "The leader's term this master knows (0: none).");
  absl::StrAppend(&out, "paceline_master_term ", role.term, "\n");
  if (role.lease_age != absl::InfiniteDuration()) {
    Header(out, "paceline_master_lease_age_seconds", "gauge",
           "Time since the leader last renewed its lease.");
    absl::StrAppend(&out, "paceline_master_lease_age_seconds ",
                    absl::ToDoubleSeconds(role.lease_age), "\n");
  }
  if (role.replication_lag != absl::InfiniteDuration()) {
    Header(out, "paceline_master_replication_lag_seconds", "gauge",
           "A standby: age of its followed copy of the store.");
    absl::StrAppend(&out, "paceline_master_replication_lag_seconds ",
                    absl::ToDoubleSeconds(role.replication_lag), "\n");
  }
  return out;
}

std::string RenderHostMetrics(const hostmgr::HostTracker& hosts,
                              const placement::ClusterSnapshot& snapshot) {
  std::string connected, certificates, capacity, allocated, gpus;
  for (const hostmgr::TrackedHost& h : hosts.all()) {
    if (const size_t n = h.spec.gpu_models.size(); n > 0) {
      const size_t bad = h.gpu_faults.size();
      absl::StrAppend(&gpus, "paceline_host_gpus{host=\"", h.spec.name, "\",health=\"healthy\"} ",
                      n - bad, "\n", "paceline_host_gpus{host=\"", h.spec.name,
                      "\",health=\"unhealthy\"} ", bad, "\n");
    }
    absl::StrAppend(&connected, "paceline_host_connected{host=\"", h.spec.name, "\",maintenance=\"",
                    records::MaintenanceName(h.maintenance), "\"} ", h.connected ? 1 : 0, "\n");
    if (h.connected && h.agent.certificate_not_after != absl::InfinitePast()) {
      absl::StrAppend(&certificates,
                      "paceline_agent_certificate_not_after_timestamp_seconds{host=\"", h.spec.name,
                      "\"} ", absl::ToUnixSeconds(h.agent.certificate_not_after), "\n");
    }
    const placement::HostState* state = snapshot.host(h.id);
    if (state == nullptr) continue;
    for (Dim d : kAllDims) {
      absl::StrAppend(&capacity, "paceline_host_capacity{host=\"", h.spec.name, "\",resource=\"",
                      DimName(d), "\"} ", state->capacity()[d], "\n");
      absl::StrAppend(&allocated, "paceline_host_allocated{host=\"", h.spec.name, "\",resource=\"",
                      DimName(d), "\"} ", state->allocated()[d], "\n");
    }
  }
  std::string out;
  Header(out, "paceline_host_connected", "gauge",
         "1 when the host's agent is connected, 0 otherwise; maintenance: UP, DRAINING, DRAINED, "
         "DOWN.");
  out += connected;
  Header(out, "paceline_agent_certificate_not_after_timestamp_seconds", "gauge",
         "When the client certificate a connected agent presents expires (Unix seconds; its "
         "agent renews it after two thirds of its validity).");
  out += certificates;
  Header(out, "paceline_host_capacity", "gauge",
         "What the host offers per resource (millicores, bytes, milli-GPUs).");
  out += capacity;
  Header(out, "paceline_host_allocated", "gauge",
         "What the host's tasks hold per resource, revocable work included (base units).");
  out += allocated;
  Header(out, "paceline_host_gpus", "gauge",
         "A GPU host's devices by health: unhealthy ones (an XID or ECC error, as its agent "
         "reported) take no new work.");
  out += gpus;
  return out;
}

std::string RenderCertificateMetrics(const std::vector<CertificateExpiry>& certificates) {
  std::string out;
  if (certificates.empty()) return out;
  Header(out, "paceline_tls_certificate_not_after_timestamp_seconds", "gauge",
         "When a certificate this master serves with expires (Unix seconds).");
  for (const CertificateExpiry& c : certificates) {
    absl::StrAppend(&out, "paceline_tls_certificate_not_after_timestamp_seconds{certificate=\"",
                    c.certificate, "\",file=\"", c.file, "\"} ", absl::ToUnixSeconds(c.not_after),
                    "\n");
  }
  return out;
}

}  // namespace paceline::api
