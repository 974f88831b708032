#pragma once
// PortAllocator + PortsHook: host ports for tasks.
//
// Ports come from the configured range [min, max]. A port is never given to two live runs: it is
// marked used at Prepare (or Recover) and released only at Cleanup, i.e. after every process of
// the run is gone — so a new task never gets a port a dying task may still hold. Allocation goes
// round-robin from the last port handed out (a just-released port is the last to be reused) and
// skips ports some other program on the host is listening on (a bind probe on 0.0.0.0).
//
// PortsHook gives each port name of the spec a port (the one the master assigned, if any, else
// a dynamic one) and exports PACELINE_PORT_<NAME>.
//
// Thread-safety: runtime thread only.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/task_hook.h"

namespace paceline::agent {

class PortAllocator {
 public:
  // `probe_bind`: skip ports that another process has bound.
  PortAllocator(uint16_t min, uint16_t max, bool probe_bind = true);

  absl::StatusOr<uint16_t> Allocate();
  // Marks a specific port used: OutOfRange outside the range, AlreadyExists when in use.
  absl::Status Reserve(uint16_t port);
  void Release(uint16_t port);
  bool IsUsed(uint16_t port) const;
  size_t used_count() const { return used_count_; }
  size_t capacity() const { return used_.size(); }

 private:
  uint16_t min_;
  bool probe_bind_;
  std::vector<bool> used_;
  size_t next_ = 0;  // index of the next candidate
  size_t used_count_ = 0;
};

// True when nothing on the host listens on (or holds) TCP `port`.
bool TcpPortBindable(uint16_t port);

class PortsHook final : public TaskHook {
 public:
  explicit PortsHook(PortAllocator& ports) : ports_(ports) {}
  absl::string_view name() const override { return "ports"; }
  absl::Status Prepare(RunContext& ctx) override;
  absl::Status Recover(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

 private:
  PortAllocator& ports_;
};

}  // namespace paceline::agent
