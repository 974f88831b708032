#pragma once
// Prometheus text exposition of the master's state, for GET /metrics:
//   paceline_tasks{state}                      tasks by state
//   paceline_jobs{state}                       jobs by state
//   paceline_hosts{connected}                  hosts by connection
//   paceline_host_used{host,resource}          the host's measured use (cpu, memory)
//   paceline_host_tasks_used{host,resource}    its tasks' measured use
//   paceline_allocated_unused{resource}        slack for revocable work (allocated - used)
//   paceline_pool_{reservation,limit,entitlement,allocation,demand}{pool,resource}
//                                              per pool and resource, in base units
//   paceline_pool_queued_gangs{pool}           admission queue length
//   paceline_placements_total                  tasks placed since start
//   paceline_scheduling_cycles_total           scheduling cycles since start
//   paceline_store_commits_total, paceline_store_batches_total, paceline_store_failed_commits_total
//   paceline_store_commit_seconds_sum, paceline_store_commit_seconds_max
//
// Thread-safety: RenderMetrics reads the core; call it on the event loop (Cluster::Read).

#include <string>

#include "scheduler/scheduler_core.h"
#include "store/group_commit.h"

namespace paceline::api {

std::string RenderMetrics(const scheduler::SchedulerCore& core,
                          const store::GroupCommitStats& store_stats);

}  // namespace paceline::api
