#pragma once
// Prometheus text exposition of the master's state, for GET /metrics:
//   paceline_tasks{state}                      tasks by state
//   paceline_jobs{state}                       jobs by state
//   paceline_hosts{connected}                  hosts by connection (true, reconnecting, false)
//   paceline_host_connected{host,maintenance}  1 when its agent is connected, 0 otherwise;
//                                              maintenance: UP, DRAINING, DRAINED, DOWN
//   paceline_host_capacity{host,resource}      what the host offers (base units; disk: what
//                                              its agent offers for sandboxes)
//   paceline_host_allocated{host,resource}     what its tasks hold, revocable work included
//   paceline_host_used{host,resource}          the host's measured use (cpu, memory)
//   paceline_host_tasks_used{host,resource}    its tasks' measured use
//   paceline_allocated_unused{resource}        slack for revocable work (allocated - used)
//   paceline_pool_{reservation,limit,entitlement,allocation,demand}{pool,resource}
//                                              per pool and resource, in base units
//   paceline_pool_queued_gangs{pool}           admission queue length
//   paceline_placements_total                  tasks placed since start
//   paceline_scheduling_cycles_total           scheduling cycles since start
//   paceline_scheduling_cycle_seconds{quantile}, _sum, _count, _max
//                                              how long the cycles took (quantiles 0.5, 0.99
//                                              within a factor of two, never under)
//   paceline_store_commits_total, paceline_store_batches_total, paceline_store_failed_commits_total
//   paceline_store_commit_seconds_total, paceline_store_commit_seconds_max
//   paceline_retention_finished_jobs           finished jobs still in the live store
//   paceline_archive_lag_seconds               how long the oldest expired job has waited to
//                                              be archived (0: none waits)
// and, from the retention worker (RenderRetentionMetrics):
//   paceline_store_rows{table}                 live rows per table (sampled every 30 s)
//   paceline_store_bytes                       the store's size on disk (sampled)
//   paceline_archive_jobs_total, paceline_archive_bytes_total, paceline_archive_failures_total
// and, from usage accounting (RenderUsageMetrics; usage_source.h), per pool, counted from the
// runs that ended since this master started:
//   paceline_pool_usage_cpu_seconds_total{pool}          cores allocated x running seconds
//   paceline_pool_usage_memory_byte_seconds_total{pool}  bytes allocated x running seconds
//   paceline_pool_usage_gpu_seconds_total{pool}          GPUs allocated x running seconds
//   paceline_pool_usage_tasks_total{pool}                runs that ended after running
// and, per connected agent with TLS (RenderHostMetrics):
//   paceline_agent_certificate_not_after_timestamp_seconds{host}   Unix seconds
// and, on every master with TLS (RenderCertificateMetrics), its certificates' end of validity:
//   paceline_tls_certificate_not_after_timestamp_seconds{certificate,file}   Unix seconds
// and, on every master (RenderRoleMetrics), what part it plays:
//   paceline_master_leader                     1 when it leads or runs alone, 0 on a standby
//   paceline_master_term                       the leader's term it knows (0: no lease)
//   paceline_master_lease_age_seconds          since the leader last renewed (absent: none)
//
// Thread-safety: RenderMetrics reads the core; call it on the event loop (Cluster::Read).

#include <string>
#include <vector>

#include "api/cluster_service.h"
#include "common/duration_histogram.h"
#include "hostmgr/host_tracker.h"
#include "placement/cluster_snapshot.h"
#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"

namespace paceline::api {

std::string RenderMetrics(const scheduler::SchedulerCore& core,
                          const store::GroupCommitStats& store_stats,
                          const DurationHistogram& cycle_times);
std::string RenderRoleMetrics(const MasterRole& role);
std::string RenderHostMetrics(const hostmgr::HostTracker& hosts,
                              const placement::ClusterSnapshot& snapshot);
std::string RenderCertificateMetrics(const std::vector<CertificateExpiry>& certificates);
std::string RenderRetentionMetrics(const RetentionFacts& facts);
std::string RenderUsageMetrics(const std::vector<PoolUsageCounter>& pools);

}  // namespace paceline::api
