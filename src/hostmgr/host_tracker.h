#pragma once
// HostTracker: the hosts the scheduler knows, by name, with their dense HostId, their
// registration and their liveness. Pure: heartbeats come in with a time, and Expired(now)
// says which hosts missed theirs for longer than the timeout.
//
// A host that registered once keeps its HostId for the life of the process (placement indexes
// hosts by id). States:
//
//   Restore() --> RECONNECTING --(Register)--> CONNECTED <--(Register)-- DISCONNECTED
//                      |                          |                          ^
//                      +------(timeout)-----------+----(timeout, Disconnect)--+
//
// RECONNECTING is a host the store knew when this master started (a restart or a takeover):
// its agent has not registered with this master yet, so nothing can be sent to it, but its
// tasks wait for it until the timeout and its capacity still counts, so that a restart does not
// shrink the pools' entitlements before the agents are back.
//
// The restored hosts that are still RECONNECTING expire together, once no restored host has
// come back for a whole timeout — not one timeout after the restore: re-registering a large
// fleet (each agent listing its runs, each run adopted again) can take the master longer than
// the timeout, and hosts whose registration is still waiting must not be declared lost (their
// runs LOST, to run again) meanwhile. At the latest they expire kMaxRestoreGrace timeouts after
// the restore, however many hosts are still coming back.
//
// Cost: every heartbeat is appended to a queue in time order; Expire(now) pops the entries
// older than the timeout and expires a host only if the entry is its latest heartbeat, so a
// cycle costs O(heartbeats since the last cycle), not O(hosts) (the end of a restore is one
// pass over the hosts). The sum of the connected
// hosts' capacities is kept as they connect and disconnect. Times must not go backwards.
//
// Thread-safety: single-threaded.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "placement/host_state.h"
#include "records/records.h"

namespace paceline::hostmgr {

// What a host's agent said of itself when it registered (`host list`, `version --all`).
struct AgentFacts {
  std::string isolation;  // "cgroup v2", "cgroup v1", "none"
  std::string version;    // its release, e.g. "0.1.0"
  std::string commit;     // the commit it was built from
  // When the client certificate it connected with ends (InfinitePast: none, plain text).
  absl::Time certificate_not_after = absl::InfinitePast();
};

// A GPU device its agent found unhealthy (docs/agent.md "GPUs"); soft state, reported again
// whenever the agent registers.
struct GpuFault {
  uint32_t device = 0;
  std::string reason;
  absl::Time since;
  friend bool operator==(const GpuFault&, const GpuFault&) = default;
};

struct TrackedHost {
  HostId id;
  placement::HostSpec spec;  // as last registered
  bool connected = false;
  bool reconnecting = false;  // restored, its agent not registered since (see above)
  absl::Time last_seen = absl::InfinitePast();
  AgentFacts agent;
  // Its agent's IP address when it last registered (durable: a restored host keeps the stored
  // one; "" when unknown).
  std::string address;
  // The operator's maintenance state (durable): UP -> DRAINING -> DRAINED -> DOWN -> UP.
  records::HostMaintenance maintenance = records::HostMaintenance::kUp;
  // Its unhealthy GPU devices, by device (kept when it registers again: its agent's
  // registration says them again, AgentControl::SetGpuFaults).
  std::vector<GpuFault> gpu_faults;
};

class HostTracker {
 public:
  explicit HostTracker(absl::Duration timeout) : timeout_(timeout) {}

  // Registers (or re-registers) a host, its agent at `address`; returns its id and whether it is
  // new.
  std::pair<HostId, bool> Register(placement::HostSpec spec, absl::Time now,
                                   std::string address = "");
  // Adds a host known from the store as RECONNECTING, until it registers or expires (above),
  // with the address it last registered from. Returns its id.
  HostId Restore(placement::HostSpec spec, absl::Time now, std::string address = "");
  // False when the host is unknown or disconnected (it must register again).
  bool Heartbeat(const std::string& name, absl::Time now);
  void Disconnect(const std::string& name);
  void SetAgentFacts(const std::string& name, AgentFacts facts);
  // Replaces the host's unhealthy GPU devices (sorted by device, each one once, each below its
  // device count).
  void SetGpuFaults(HostId id, std::vector<GpuFault> faults);
  void SetMaintenance(HostId id, records::HostMaintenance m) { hosts_[id.value()].maintenance = m; }
  const AgentFacts& agent_facts(HostId id) const { return hosts_[id.value()].agent; }
  // Connected hosts last heard of longer than the timeout ago, and the reconnecting ones once
  // their restore is over (above); marks them disconnected.
  std::vector<HostId> Expire(absl::Time now);

  // How many timeouts after a restore its reconnecting hosts expire at the latest.
  static constexpr int kMaxRestoreGrace = 10;

  // The sum of the capacities of the connected and the reconnecting hosts.
  const Resources& connected_capacity() const { return connected_capacity_; }

  const TrackedHost* Find(const std::string& name) const;
  const TrackedHost& Get(HostId id) const { return hosts_[id.value()]; }
  const std::vector<TrackedHost>& all() const { return hosts_; }
  absl::Duration timeout() const { return timeout_; }

 private:
  struct Beat {
    absl::Time at;
    uint32_t host;
  };
  uint32_t Add(placement::HostSpec spec, absl::Time now, bool reconnecting);
  void SetDisconnected(uint32_t i);

  absl::Duration timeout_;
  std::vector<TrackedHost> hosts_;  // indexed by HostId
  std::deque<Beat> beats_;          // heartbeats and registrations, in time order
  // The restore's reconnecting hosts: how many are left, when the last Restore() was, and when
  // a restored host last came back.
  size_t reconnecting_ = 0;
  absl::Time restored_at_ = absl::InfinitePast();
  absl::Time returning_at_ = absl::InfinitePast();
  Resources connected_capacity_;
  absl::flat_hash_map<std::string, uint32_t> by_name_;
};

}  // namespace paceline::hostmgr
