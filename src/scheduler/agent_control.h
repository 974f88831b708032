#pragma once
// AgentControl: the agents' entry points into the scheduler core (for the agent protocol,
// masterd/agent_connection.h, and `paceline sim`'s simulated hosts): registration and
// reconciliation, heartbeats, status reports, usage reports, and the operator's host
// maintenance. Each call applies its effects through the core's Absorber; the changes are in
// `out` (commit its batch before acknowledging). It works on the core's parts it is given
// (Parts) and keeps the one thing only it uses: each host's image cache as its agent reported it.
//
// Thread-safety: single-threaded, like the core it belongs to (SchedulerCore::agents()).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "placement/host_state.h"
#include "records/records.h"
#include "resmgr/resource_manager.h"
#include "scheduler/absorber.h"
#include "scheduler/actions.h"
#include "scheduler/gangs.h"
#include "scheduler/host_upkeep.h"
#include "scheduler/shape_cache.h"
#include "scheduler/usage_tracker.h"
#include "scheduler/wait_reasons.h"

namespace paceline::scheduler {

// What an agent declares when it (re)connects.
struct HostRegistration {
  std::string name;
  Resources capacity;                   // offered: cpu, memory, disk (gpu from gpu_models)
  std::vector<std::string> gpu_models;  // one entry per device
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<placement::PortRange> ports;
  std::string address;  // the agent's IP address as the master sees it ("" unknown: `sim`)
};

// A run an agent reports when it registers, with the ports and GPU devices it holds.
struct ReportedRun {
  RunId run;
  std::vector<std::pair<std::string, uint32_t>> ports;
  std::vector<uint32_t> gpu_devices;
};

// What an agent measured for one of its runs.
struct ReportedUsage {
  RunId run;
  Resources used;  // cpu_milli and memory_bytes
};

class AgentControl {
 public:
  // The parts of the core the agents' calls work on.
  struct Parts {
    hostmgr::HostTracker& hosts;
    placement::ClusterSnapshot& snapshot;
    jobmgr::JobManager& jobs;
    resmgr::ResourceManager& rm;
    UsageTracker& usage;
    Gangs& gangs;
    ShapeCache& shapes;
    WaitReasons& why;
    Absorber& absorber;
    HostUpkeep& upkeep;
  };

  explicit AgentControl(Parts parts) : parts_(parts) {}

  // `running`: the runs the agent has (from its checkpoint). Runs the core does not own are
  // killed; runs the core believes are on this host but the agent does not have are LOST; runs
  // the core owns but does not account for (after a master restart) are adopted: recorded on
  // the host and in the resource manager as running, without going through admission.
  absl::Status RegisterHost(const HostRegistration& reg, const std::vector<ReportedRun>& running,
                            absl::Time now, Actions& out);
  // False when the host must register again (unknown, or already declared lost).
  bool Heartbeat(const std::string& host, absl::Time now);
  void OnStatus(const jobmgr::StatusReport& report, absl::Time now, Actions& out);
  // The host's unhealthy GPU devices, as its agent reports them (the whole list each time; soft
  // state, sent again on every registration). An unhealthy device takes no new work, and what
  // it has free leaves the pools' capacity (OfferedCapacity); the runs on a
  // device that just became unhealthy get an event
  // (GPU_UNHEALTHY) that says why, and go on. InvalidArgument for a device the host does not
  // have or one listed twice (nothing changes); FailedPrecondition for a host not connected.
  absl::Status SetGpuFaults(const std::string& host, std::vector<hostmgr::GpuFault> faults,
                            absl::Time now, Actions& out);
  // What the host's agent said of itself: its isolation, release and commit (`host list`).
  void SetAgentFacts(const std::string& host, hostmgr::AgentFacts facts);
  // Host maintenance (hostmgr/maintenance.h): drain, down (only once DRAINED), up. NOT_FOUND for
  // an unknown host, FAILED_PRECONDITION for a transition that is not allowed (the message says
  // what to do first).
  absl::Status SetMaintenance(const std::string& host, records::HostMaintenance next,
                              absl::Time now, Actions& out);

  // --- usage (soft state: measured by the agents, never stored) ---
  // The latest usage `host`'s agent measured; replaces its previous report. Runs that are not
  // the current run of a RUNNING task on this host are ignored. Each cycle, the slack of the
  // regular runs (allocated - used, see usage_tracker.h) is offered to revocable work.
  void ReportUsage(const std::string& host, const HostUsageSample& sample,
                   const std::vector<ReportedUsage>& runs, absl::Time now);
  // The current run's fresh measurement, if any.
  std::optional<RunUsageView> RunUsage(TaskId task, absl::Time now) const;
  std::optional<HostUsageView> HostUsage(const std::string& host, absl::Time now) const;
  // The host's image cache as its agent last reported it (empty: none reported).
  const std::vector<HostImage>& HostImages(const std::string& host) const;
  // What the pools share: the connected hosts' capacity less what their unhealthy GPU devices
  // would have free (a device's running tasks keep counting until they end).
  Resources OfferedCapacity() const;
  // Allocated to regular tasks but measured unused (the slack the resource manager is told of).
  Resources AllocatedUnused(absl::Time now) const;

 private:
  void Adopt(const ReportedRun& run, HostId host, absl::Time now);

  Parts parts_;
  absl::flat_hash_map<std::string, std::vector<HostImage>> host_images_;  // by host name
};

}  // namespace paceline::scheduler
