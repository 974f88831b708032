#pragma once
// ClusterSnapshot: the hosts the placement engine places onto, their usage, the committed
// tasks, and the indexes that keep a placement from scanning the cluster:
//   - two FreeIndexes of the UP hosts bucketed by free capacity per dimension: one by what
//     regular work may take (HostState::FreeFor(false)), one by what revocable work may take
//     (FreeFor(true): unallocated capacity plus slack), so that both kinds of task walk only
//     hosts that can hold them. The second is built when the first revocable task or slack
//     appears (until then both views are equal everywhere) and kept from then on;
//   - a per-label value index (label -> value -> hosts) for `in` constraints;
//   - a log of hosts whose static attributes (status, labels) changed, so that the engine's
//     per-class constraint caches are patched instead of recomputed;
//   - interned (job label, value) pairs, the keys of per-label anti-affinity counts.
//
// Hosts are addressed by HostId; HostId values are dense indexes ("slots").
//
// Mutations (the one applier): AddHost / RemoveHost, SetHostStatus, SetHostLabels, SetHostSlack
// (the host's allocated-but-unused capacity, from usage reports), Commit (a task assignment,
// verified), Adopt (a task found running after a restart), Release (a task), FailHost (mark a
// host DOWN/LOST and release every task on it). Each either applies fully or returns an error
// and changes nothing. The accounting of regular and revocable work is in host_state.h.
// The PlacementEngine additionally places tentative holds while it builds a plan and removes
// them all before returning, so Place() leaves the snapshot as it found it.
//
// Ownership: the snapshot owns its hosts and task records; shapes are shared (shared_ptr).
// Thread-safety: none; single-threaded (the master's event loop, or `paceline sim`).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/chunked_array.h"
#include "common/ids.h"
#include "placement/free_index.h"
#include "placement/host_state.h"
#include "placement/placement_request.h"

namespace paceline::placement {

// A task bound to a host with its GPU devices and ports: an entry of a Plan, and the input of
// ClusterSnapshot::Commit.
struct Assignment {
  TaskId task;
  HostId host;
  std::shared_ptr<const TaskShape> shape;
  GpuShares gpus;               // device and milli-GPUs per device
  std::vector<uint32_t> ports;  // one per shape->port_names, same order
  uint32_t request_index = 0;   // index of the request (gang) in the Place() input
};

class ClusterSnapshot {
 public:
  // Copies are whole copies with an identity of their own (identity()).
  ClusterSnapshot() = default;

  // --- hosts ---
  // InvalidArgument: id already present, duplicate label keys, negative capacity, a gpu
  // capacity that disagrees with the device list, an empty or inverted port range.
  absl::Status AddHost(HostSpec spec);
  // Removes a host; returns the tasks that were on it (released). NotFound if absent.
  absl::StatusOr<std::vector<TaskId>> RemoveHost(HostId id);
  // Only UP hosts take new work; tasks stay where they are on any status change.
  absl::Status SetHostStatus(HostId id, HostStatus status);
  // Marks the host DOWN or LOST and releases every task on it; returns them.
  absl::StatusOr<std::vector<TaskId>> FailHost(HostId id, HostStatus status = HostStatus::kLost);
  absl::Status SetHostLabels(HostId id, std::vector<std::pair<std::string, std::string>> labels);
  // The images the host has cached (canonical reference -> bytes), as its agent reported them.
  absl::Status SetHostImages(HostId id, absl::flat_hash_map<std::string, int64_t> images);
  // Whether GPU `device` of the host is healthy (HostState's GpuDevice): an unhealthy one keeps
  // its tasks' shares and takes no new ones. NotFound for an absent host, InvalidArgument for a
  // device it does not have.
  absl::Status SetGpuHealth(HostId id, size_t device, bool healthy);
  // The gpu the unhealthy devices of hosts that are not LOST would have free: capacity that
  // is not offered (HostState::withheld_gpu_milli). O(hosts with an unhealthy device).
  int64_t WithheldGpuMilli() const;
  // The largest size any host reported for `image`; 0 when no host has it.
  int64_t ImageSize(const std::string& image) const;
  // The host's slack: what its running regular tasks hold but do not use (cpu and memory; the
  // gpu dimension is ignored, negative amounts count as 0). Zero when its usage is not known.
  absl::Status SetHostSlack(HostId id, const Resources& slack);

  // Host holds (docs/resource-manager.md "Backfill on hosts"): keeps a host for the tasks of
  // gang `gang` (a caller's gang id, not 0) and for tasks that end by `until` (the filter
  // held_hosts); it ends with ReleaseHostHold. A host has one hold at a time: holding it again
  // replaces it. NotFound for an absent host, InvalidArgument for gang 0.
  absl::Status HoldHost(HostId id, uint64_t gang, absl::Time until);
  void ReleaseHostHold(HostId id);
  // Whether some host is held for `gang` (false for 0). The engine does not cache placement
  // failures of such a gang's tasks: they may use hosts their class may not.
  bool HoldsHostsFor(uint64_t gang) const { return gang != 0 && held_gangs_.contains(gang); }

  // --- tasks ---
  // Verifies that the assignment fits now (host UP; resources, GPU devices and models, ports
  // free; task not already placed) and applies it. Constraints (labels, anti-affinity) are the
  // engine's business and are not re-checked. AlreadyExists, NotFound, FailedPrecondition,
  // ResourceExhausted or InvalidArgument otherwise.
  absl::Status Commit(const Assignment& a);
  // Records a task that already runs on the host (its agent reported it after a restart). As
  // Commit, except that a revocable task's resources are not checked: the slack it runs on is
  // not known until the host reports usage again.
  absl::Status Adopt(const Assignment& a);
  // Starts loading where `task`'s record would be found, for an Adopt or Commit soon after:
  // at millions of tasks each lookup waits for memory, and a host's runs are adopted together.
  void Prefetch(TaskId task) const { tasks_.prefetch(task); }
  // Frees what the task holds. NotFound when the task is not placed.
  absl::Status Release(TaskId task);

  // --- reads ---
  const HostState* host(HostId id) const;
  const HostState& host_at(uint32_t slot) const { return *hosts_[slot]; }
  bool present(uint32_t slot) const { return slot < hosts_.size() && hosts_[slot].has_value(); }
  uint32_t slots() const { return static_cast<uint32_t>(hosts_.size()); }
  size_t num_hosts() const { return num_hosts_; }
  size_t num_tasks() const { return tasks_.size(); }
  // Room for this many task records without growing (a restart knows how many will be adopted).
  void ReserveTasks(size_t tasks) { tasks_.reserve(tasks); }
  // Revocable tasks placed (engine holds included), over all hosts.
  uint64_t revocable_tasks() const { return revocable_tasks_; }
  std::optional<HostId> TaskHost(TaskId task) const;
  // What a placed task holds (resources, devices, ports); nullptr when it is not placed.
  const Usage* TaskUsage(TaskId task) const;
  // The index of what regular work (false) or revocable work (true) may take.
  const FreeIndex& free_index(bool revocable = false) const {
    return revocable && revocable_indexed_ ? revocable_index_ : index_;
  }
  // Hosts (slots) carrying label `key` with value `value`; nullptr when none ever did.
  const std::vector<uint32_t>* HostsWithLabel(absl::string_view key, absl::string_view value) const;
  // The largest capacity of any present host, per dimension.
  Resources MaxCapacity() const;
  // GPU devices per model over the present hosts, whatever their status or health (the
  // supply scorer gpu_model_pressure weighs demand against); changes only with static_seq().
  const absl::flat_hash_map<std::string, int64_t>& gpu_devices_by_model() const {
    return gpu_devices_by_model_;
  }

  // Recomputes every host's usage from the task records and checks it against the kept
  // values and the capacities (no over-commit of regular work in any dimension, none of any
  // GPU device, ports unique, counts consistent). Revocable work beyond capacity + slack is
  // not an error here (it is being reclaimed; see HostState::RevocableExcess). For tests and
  // `paceline sim`; O(hosts + tasks).
  absl::Status Validate() const;

  // --- for the engine's caches ---
  uint32_t InternLabelPair(absl::string_view key, absl::string_view value);
  // Identifies this snapshot object for the engine's caches: a copy gets a new identity, and an
  // identity is never reused while a cache still holds it (no global counter).
  std::weak_ptr<const void> identity() const { return identity_.token; }
  // Sequence number of the static-change log (grows with every status or label change).
  uint64_t static_seq() const { return log_base_ + log_.size(); }
  // Slots whose static attributes changed since `seq`; nullopt when the log was truncated.
  std::optional<std::span<const uint32_t>> StaticChangesSince(uint64_t seq) const;
  // A log of the hosts where a task may fit now that did not fit before: a task released, a
  // host added or changed (status, labels), a gang's tentative holds rolled back, more slack.
  // Committing tasks never adds to it, so a task that fit nowhere at relax_seq() s still fits
  // nowhere unless it fits one of RelaxedSince(s).
  uint64_t relax_seq() const { return relax_base_ + relax_log_.size(); }
  // Slots relaxed since `seq`; nullopt when the log was truncated or MarkRelaxed() was called.
  std::optional<std::span<const uint32_t>> RelaxedSince(uint64_t seq) const;
  // For the applier: holds the engine counted did not become commitments (a rejected plan), so
  // every earlier failure is stale.
  void MarkRelaxed();

 private:
  friend class PlacementEngine;

  struct TaskRecord {
    uint32_t slot = 0;
    uint32_t pos = 0;  // index in the host's task list
    Usage usage;
  };

  HostState* mutable_host(HostId id);
  void Reindex(uint32_t slot);
  // Builds the revocable index (once): revocable work or slack is about to appear.
  void IndexRevocable();
  void LogStaticChange(uint32_t slot);
  void IndexLabels(uint32_t slot, bool add);
  // Usage of a shape on a host, with interned label pairs.
  Usage MakeUsage(const TaskShape& shape, GpuShares gpus, std::vector<uint32_t> ports);
  absl::Status CheckFits(const HostState& h, const TaskShape& shape, const GpuShares& gpus,
                         const std::vector<uint32_t>& ports, bool adopting) const;
  absl::Status Record(const Assignment& a, bool adopting);
  void ReleaseRecord(TaskId task);

  // Engine holds: tentative usage, no task record. `rollback`: the hold is given up (a gang
  // that did not fit), not about to be committed, so the host is logged as relaxed.
  void Hold(uint32_t slot, const Usage& u);
  void Unhold(uint32_t slot, const Usage& u, bool rollback);
  void LogRelaxed(uint32_t slot);

  // A token of its own for every object: copying a snapshot makes a new one.
  struct Identity {
    std::shared_ptr<const void> token = std::make_shared<char>();
    Identity() = default;
    Identity(const Identity&) : Identity() {}
    Identity& operator=(const Identity&) {
      token = std::make_shared<char>();
      return *this;
    }
    Identity(Identity&&) = default;
    Identity& operator=(Identity&&) = default;
  };

  Identity identity_;
  std::vector<std::optional<HostState>> hosts_;
  size_t num_hosts_ = 0;
  FreeIndex index_;            // by FreeFor(false)
  FreeIndex revocable_index_;  // by FreeFor(true), once revocable_indexed_
  bool revocable_indexed_ = false;
  uint64_t revocable_tasks_ = 0;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, std::vector<uint32_t>>>
      label_index_;
  absl::flat_hash_map<std::string, uint32_t> label_pairs_;
  absl::flat_hash_map<std::string, int64_t> image_sizes_;  // the largest size reported
  absl::flat_hash_map<std::string, int64_t> gpu_devices_by_model_;
  // Task records live in a dense vector (freed entries reused) and the hash map finds them:
  // the map's spare slots then cost 4 bytes of index each, not a whole record.
  ChunkedArray<TaskRecord> records_;  // never moves as it grows (common/chunked_array.h)
  std::vector<uint32_t> free_records_;
  absl::flat_hash_map<TaskId, uint32_t> tasks_;  // -> index in records_
  std::vector<uint32_t> log_;
  uint64_t hosts_added_ = 0;  // AddHost calls: the high half of a new host's version()
  uint64_t log_base_ = 0;
  std::vector<uint32_t> relax_log_;
  uint64_t relax_base_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> held_gangs_;  // gang -> hosts held for it
  absl::flat_hash_set<uint32_t> unhealthy_gpu_hosts_;   // slots with an unhealthy device
};

}  // namespace paceline::placement
