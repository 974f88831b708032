#pragma once
// GangHook: tells a gang member where its peers run and how its framework meets them. When the
// launch carries a peer list, it is written to SANDBOX/peers.json (owned by the task user) and
// PACELINE_PEERS_FILE points at it:
//
//   {"0": {"host": "h1", "address": "10.0.0.7", "ports": {"http": 31002}, "role": "ps"},
//    "1": {"host": "h2", "ports": {...}}}
//
// keyed by instance id ("address" only when the master knows it, "role" only with roles). With
// a rendezvous (job.gang.rendezvous), the variables and files of its framework's convention
// (rendezvous.h) are added too; a variable the task's own env sets is left as it set it, but
// for PACELINE_* ones. A launch with a role gets PACELINE_ROLE, gang or not.
//
// Thread-safety: runtime thread only.

#include <map>
#include <string>
#include <vector>

#include "agent/base/task_hook.h"
#include "agent/launch/rendezvous.h"

namespace paceline::agent {

class GangHook final : public TaskHook {
 public:
  absl::string_view name() const override { return "gang"; }
  absl::Status Prepare(RunContext& ctx) override;

  static std::string PeersJson(const std::map<uint32_t, GangPeer>& peers);
  // This host's interfaces and their IPv4 and IPv6 addresses (getifaddrs); empty on an error.
  static std::vector<NetInterface> HostInterfaces();
};

}  // namespace paceline::agent
