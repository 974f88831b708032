#pragma once
// HostState: one host as the placement engine sees it inside a ClusterSnapshot.
//
// A host has a static part, set when it registers (id, name, labels, capacity, GPU devices and
// their models, port ranges), a status (UP, DRAINING, DRAINED, DOWN, LOST) and a usage part
// (allocated resources, per-device GPU allocation, used ports, task counts per job and per job
// label value for anti-affinity, committed tasks). Only the owning ClusterSnapshot mutates a
// HostState; everybody else reads it through const references.
//
// GPUs are devices: device i has a model and `milli_allocated` in [0, 1000]. A task asking for
// N whole GPUs takes N devices at 1000 each; a task asking for a fraction f < 1000 takes f on
// one device, which other fractional tasks may share up to 1000 in total. The gpu dimension of
// `capacity()` is always 1000 x number of devices and the gpu dimension of `allocated()` is the
// sum over devices.
//
// A host labelled `paceline.exclusive=<v>` only accepts tasks that ask for exclusive <v>.
//
// Revocable work and slack. Tasks are regular or revocable (sla.revocable). Per dimension, with
//   C = capacity, R = what regular tasks hold, V = what revocable tasks hold, A = R + V,
//   S = the host's slack: what its running regular tasks hold but measurably do not use (cpu
//       and memory; set by the owner of the snapshot from fresh usage reports, 0 otherwise),
//       counted at most up to R,
// the host offers
//   regular work:   FreeFor(false) = C − R      revocable work does not take capacity from
//                                               regular work;
//   revocable work: FreeFor(true)  = C − A + S  unallocated capacity plus the slack, minus
//                                               what revocable tasks already hold there.
// GPU devices and ports are never over-committed: a device share or a port is held by its task
// whoever else wants it, so in the gpu dimension both views are C − A.
// Invariants: R <= C always (regular work is never over-committed); A <= C + S, i.e.
// FreeFor(true) >= 0, holds after every revocable placement. Placing regular work, or the
// slack shrinking, may break the second one: RevocableExcess() is then by how much, and the
// caller reclaims (kills) revocable tasks on this host until it is zero.
//
// Thread-safety: none; a HostState belongs to the single thread that owns its snapshot.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"

namespace paceline::placement {

enum class HostStatus : uint8_t { kUp = 0, kDraining = 1, kDrained = 2, kDown = 3, kLost = 4 };
// "UP", "DRAINING", "DRAINED", "DOWN", "LOST".
absl::string_view HostStatusName(HostStatus s);

// The label that reserves a host for tasks with a matching TaskShape::exclusive.
inline constexpr absl::string_view kExclusiveLabel = "paceline.exclusive";
// Milli-GPUs in one device.
inline constexpr int64_t kMilliPerGpu = 1000;

// An unhealthy device (its agent saw an XID or ECC error) keeps the shares its tasks hold, but
// offers nothing: free_milli() is 0 and the host's free gpu leaves out what it had free.
struct GpuDevice {
  std::string model;
  int64_t milli_allocated = 0;  // 0..1000
  bool healthy = true;
  int64_t free_milli() const { return healthy ? kMilliPerGpu - milli_allocated : 0; }
  bool whole_free() const { return healthy && milli_allocated == 0; }
};

// Inclusive range of host ports handed out to tasks, e.g. {31000, 32000}.
struct PortRange {
  uint32_t first = 0;
  uint32_t last = 0;
  uint32_t size() const { return last >= first ? last - first + 1 : 0; }
  friend bool operator==(const PortRange&, const PortRange&) = default;
};

// What a host declares when it registers: the input of ClusterSnapshot::AddHost.
struct HostSpec {
  HostId id;
  std::string name;
  HostStatus status = HostStatus::kUp;
  std::vector<std::pair<std::string, std::string>> labels;
  // cpu, memory, disk; the gpu dimension is derived from `gpu_models` (1000 per device) and
  // must be 0 or equal to that.
  Resources capacity;
  std::vector<std::string> gpu_models;  // one entry per device
  std::vector<PortRange> ports;
};

// One task's share of one GPU device.
struct GpuShare {
  uint16_t device = 0;
  int32_t milli = 0;
  friend bool operator==(const GpuShare&, const GpuShare&) = default;
};
using GpuShares = absl::InlinedVector<GpuShare, 2>;

using LabelPairs = absl::InlinedVector<uint32_t, 4>;  // interned (job label, value) ids

// What one task holds on a host; added and removed as a unit. The snapshot keeps one for every
// placed task, so the parts most tasks do not have (GPU shares, ports, job labels) sit behind
// one shared, immutable pointer, null when all are empty: 64 bytes instead of 120.
class Usage {
 public:
  Resources resources;
  JobId job;
  bool revocable = false;  // held by revocable work (see "Revocable work and slack" above)

  const GpuShares& gpus() const { return extras_ ? extras_->gpus : kNone.gpus; }
  const std::vector<uint32_t>& ports() const { return extras_ ? extras_->ports : kNone.ports; }
  const LabelPairs& label_pairs() const {
    return extras_ ? extras_->label_pairs : kNone.label_pairs;
  }
  // Replaces the three; allocates only when one of them is not empty.
  void SetExtras(GpuShares gpus, std::vector<uint32_t> ports, LabelPairs label_pairs);

 private:
  struct Extras {
    GpuShares gpus;
    std::vector<uint32_t> ports;
    LabelPairs label_pairs;
  };
  static const Extras kNone;
  std::shared_ptr<const Extras> extras_;
};

class HostState {
 public:
  explicit HostState(HostSpec spec);

  HostId id() const { return id_; }
  const std::string& name() const { return name_; }
  HostStatus status() const { return status_; }
  // Sorted by key; keys are unique.
  const std::vector<std::pair<std::string, std::string>>& labels() const { return labels_; }
  std::optional<absl::string_view> Label(absl::string_view key) const;
  // The value of paceline.exclusive, empty when the host is not exclusive.
  const std::string& exclusive() const { return exclusive_; }

  const Resources& capacity() const { return capacity_; }
  // What every task on the host holds (A = R + V).
  const Resources& allocated() const { return allocated_; }
  // What revocable tasks hold (V), how many they are, and what regular tasks hold (R).
  const Resources& revocable_allocated() const { return revocable_allocated_; }
  uint32_t revocable_tasks() const { return revocable_tasks_; }
  Resources regular_allocated() const { return allocated_ - revocable_allocated_; }
  // The slack as last set (cpu and memory), and the part of it that counts: at most R.
  const Resources& slack() const { return slack_; }
  Resources effective_slack() const { return Min(slack_, regular_allocated()); }
  // What a task of the given kind may still take: C − R for regular work (gpu: C − A), C − A + S
  // for revocable work. May be negative for revocable work (see RevocableExcess). Kept up to
  // date on every change (the placement hot path reads it for every candidate).
  const Resources& FreeFor(bool revocable) const {
    return revocable ? free_revocable_ : free_regular_;
  }
  // The regular view, FreeFor(false).
  const Resources& free() const { return free_regular_; }
  // capacity − FreeFor(revocable): what counts as taken, for utilisation scores.
  Resources AllocatedFor(bool revocable) const { return capacity_ - FreeFor(revocable); }
  // max(0, A − C − S) per dimension: how much revocable work must leave the host (zero when
  // every task fits).
  Resources RevocableExcess() const;

  const std::vector<GpuDevice>& gpus() const { return gpus_; }
  // Healthy devices with nothing allocated.
  int full_free_gpus() const { return full_free_gpus_; }
  // The largest free amount on a partly allocated device (0 when none).
  int64_t max_partial_free_gpu() const { return max_partial_free_gpu_; }
  // What its unhealthy devices would have free: capacity the host does not offer.
  int64_t withheld_gpu_milli() const { return withheld_gpu_milli_; }
  // Scalar GPU key for the free-capacity index: full_free_gpus * 1000 + max_partial_free_gpu.
  // A task asking N whole GPUs can fit only if key >= N * 1000; a fraction f only if key >= f.
  int64_t gpu_key() const { return full_free_gpus_ * kMilliPerGpu + max_partial_free_gpu_; }

  const std::vector<PortRange>& port_ranges() const { return port_ranges_; }
  uint32_t port_capacity() const { return port_capacity_; }
  uint32_t free_ports() const { return port_capacity_ - static_cast<uint32_t>(used_ports_.size()); }
  bool PortUsed(uint32_t port) const { return used_ports_.contains(port); }
  bool PortInRange(uint32_t port) const;
  // The `n` lowest free ports; fewer when the host has fewer free.
  std::vector<uint32_t> PickPorts(uint32_t n) const;

  uint32_t JobCount(JobId job) const;
  uint32_t LabelPairCount(uint32_t label_pair) const;
  const std::vector<TaskId>& tasks() const { return tasks_; }

  // The images the host's agent has cached: canonical reference -> size in bytes (what it
  // last reported; empty for agents that run no containers).
  const absl::flat_hash_map<std::string, int64_t>& images() const { return images_; }

  // Grows on every usage change, and never repeats at a slot (a host added again starts above
  // every earlier one's); lets scorers and the scheduler cache per-host values.
  uint64_t version() const { return version_; }

  // A host hold (ClusterSnapshot::HoldHost): the gang the host is kept free for (0: none), and
  // the time by which its tasks end; only that gang's tasks and tasks that end by then go here.
  uint64_t held_for() const { return held_for_; }
  absl::Time held_until() const { return held_until_; }

 private:
  friend class ClusterSnapshot;

  void AddUsage(const Usage& u);
  void RemoveUsage(const Usage& u);
  void SetLabels(std::vector<std::pair<std::string, std::string>> labels);
  void RecomputeGpuSummary();
  void SetGpuHealthy(size_t device, bool healthy);
  void SetSlack(const Resources& slack);
  void RecomputeFree();

  HostId id_;
  std::string name_;
  HostStatus status_;
  std::vector<std::pair<std::string, std::string>> labels_;
  std::string exclusive_;
  Resources capacity_;
  Resources allocated_;
  Resources revocable_allocated_;
  uint32_t revocable_tasks_ = 0;
  Resources slack_;
  Resources free_regular_;    // FreeFor(false)
  Resources free_revocable_;  // FreeFor(true)
  std::vector<GpuDevice> gpus_;
  int full_free_gpus_ = 0;
  int64_t max_partial_free_gpu_ = 0;
  int64_t withheld_gpu_milli_ = 0;  // what unhealthy devices would have free
  std::vector<PortRange> port_ranges_;
  uint32_t port_capacity_ = 0;
  absl::flat_hash_set<uint32_t> used_ports_;
  absl::flat_hash_map<JobId, uint32_t> job_counts_;
  absl::flat_hash_map<uint32_t, uint32_t> label_pair_counts_;
  std::vector<TaskId> tasks_;
  absl::flat_hash_map<std::string, int64_t> images_;
  uint64_t version_ = 0;
  uint64_t held_for_ = 0;
  absl::Time held_until_ = absl::InfinitePast();
};

}  // namespace paceline::placement
