#pragma once
// RmHarness: a ResourceManager with a simulated clock and a fixed cluster capacity, plus the
// few steps a caller (the master) takes, for the resource manager's tests. Test-only.
//
// Setup steps that must not fail report a gtest failure with the status.
//
// Thread-safety: single-threaded.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "resmgr/resource_manager.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr::testing {

class RmHarness {
 public:
  explicit RmHarness(Resources capacity = Cpu(100), ResourceManagerConfig config = {})
      : capacity_(capacity), rm_(config) {}

  ResourceManager& rm() { return rm_; }
  absl::Time now() const { return clock_.Now(); }
  void set_capacity(const Resources& c) { capacity_ = c; }
  void set_allocated_unused(const Resources& r) { unused_ = r; }
  void Advance(absl::Duration d) { clock_.AdvanceBy(d); }
  // The gate every later cycle asks (host_gate.h); null: none.
  void set_hosts(HostGate* hosts) { hosts_ = hosts; }

  PoolId Pool(absl::string_view path, const PoolSpec& spec = PoolSpec()) {
    absl::StatusOr<PoolId> id = rm_.CreatePool(path, spec);
    if (!id.ok()) {
      ADD_FAILURE() << id.status();
      return PoolId();
    }
    return *id;
  }
  // Advances the clock by one second and runs a cycle.
  CycleResult Cycle() {
    clock_.AdvanceBy(absl::Seconds(1));
    return rm_.RunCycle(CycleInput{capacity_, unused_, hosts_}, now());
  }
  // Starts every task of the gang (MarkRunning), one second apart.
  void Start(uint64_t gang) {
    for (const TaskId& t : Tasks(gang)) {
      clock_.AdvanceBy(absl::Seconds(1));
      absl::Status s = rm_.MarkRunning(t, now());
      if (!s.ok()) ADD_FAILURE() << s;
    }
  }
  void StartAll(const CycleResult& r) {
    for (const AdmittedGang& a : r.admitted) Start(a.gang.value());
  }
  // Releases every task the decisions name.
  void ReleasePreempted(const CycleResult& r) {
    for (const PreemptionDecision& d : r.preempted) {
      for (const TaskId& t : d.tasks) {
        absl::Status s = rm_.Release(t);
        if (!s.ok()) ADD_FAILURE() << s;
      }
    }
  }
  // Remembers the tasks of every gang it enqueues, for Start.
  void Remember(const GangRequest& g) {
    std::vector<TaskId>& v = tasks_[g.id.value()];
    v.clear();
    for (const TaskRequest& t : g.tasks) v.push_back(t.id);
  }
  // Enqueues the gang (remembering its tasks).
  void Add(const GangRequest& g) {
    Remember(g);
    absl::Status s = rm_.Enqueue(g, now());
    if (!s.ok()) ADD_FAILURE() << s;
  }
  const std::vector<TaskId>& Tasks(uint64_t gang) { return tasks_[gang]; }

  static std::vector<uint64_t> AdmittedIds(const CycleResult& r) {
    std::vector<uint64_t> out;
    for (const AdmittedGang& a : r.admitted) out.push_back(a.gang.value());
    return out;
  }
  static std::vector<uint64_t> PreemptedIds(const CycleResult& r) {
    std::vector<uint64_t> out;
    for (const PreemptionDecision& d : r.preempted) out.push_back(d.gang.value());
    return out;
  }
  // The reason of the queued gang.
  WaitReason Reason(uint64_t gang) {
    absl::StatusOr<GangView> v = rm_.DescribeGang(GangId(gang));
    if (!v.ok() || !v->queued.has_value()) {
      ADD_FAILURE() << "gang " << gang << " is not queued";
      return WaitReason();
    }
    return v->queued->reason;
  }
  std::string Why(uint64_t gang) {
    absl::StatusOr<GangView> v = rm_.DescribeGang(GangId(gang));
    if (!v.ok() || !v->queued.has_value()) return "(not queued)";
    return v->queued->why;
  }
  PoolStats Stats(PoolId pool) {
    absl::StatusOr<PoolStats> s = rm_.Stats(pool);
    if (!s.ok()) ADD_FAILURE() << s.status();
    return s.ok() ? *s : PoolStats();
  }

 private:
  Resources capacity_;
  Resources unused_;
  HostGate* hosts_ = nullptr;
  SimulatedClock clock_;
  ResourceManager rm_;
  absl::flat_hash_map<uint64_t, std::vector<TaskId>> tasks_;
};

}  // namespace paceline::resmgr::testing
