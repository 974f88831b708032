#pragma once
// GangHook: tells a gang member where its peers run. When the launch carries a peer list, it is
// written to SANDBOX/peers.json (owned by the task user) and PACELINE_PEERS_FILE points at it:
//
//   {"0": {"host": "h1", "address": "10.0.0.7", "ports": {"http": 31002}},
//    "1": {"host": "h2", "ports": {...}}}
//
// keyed by instance id ("address" only when the master knows it). Thread-safety: runtime thread
// only.

#include <map>
#include <string>

#include "agent/base/task_hook.h"

namespace paceline::agent {

class GangHook final : public TaskHook {
 public:
  absl::string_view name() const override { return "gang"; }
  absl::Status Prepare(RunContext& ctx) override;

  static std::string PeersJson(const std::map<uint32_t, GangPeer>& peers);
};

}  // namespace paceline::agent
