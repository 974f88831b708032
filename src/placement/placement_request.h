#pragma once
// PlacementRequest: what the placement engine is asked to place — one task, or a gang of tasks
// that must all get a host in the same plan or none at all.
//
// The placement-relevant part of a task spec is a TaskShape: resources, GPU models, ports,
// host label constraints, anti-affinity (max per host), exclusive, whether the job is revocable
// (it then fits on the host's slack, see host_state.h), and the job id and labels that
// anti-affinity counts. A shape is immutable once built by MakeTaskShape, and is shared by
// every instance of a job (a 100,000-instance job has one shape), so a request costs a task id
// and a pointer per instance. Equal shapes form one equivalence class in the engine: their
// feasibility work (constraint checks, candidate search state) is done once per class.
//
// Per instance, a PlacementTask adds the task id and, for an instance that ran before, its
// previous host: a preference (restart, in-place update) or, for a stateful instance whose
// volume lives there, a strong preference; `required_host` pins it (hard).
//
// Thread-safety: value types; shapes are immutable and may be shared across threads.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "spec/job_spec.h"

namespace paceline::placement {

struct TaskShape {
  JobId job;
  std::vector<std::pair<std::string, std::string>> job_labels;  // sorted by key
  Resources resources;
  std::vector<std::string> gpu_models;  // acceptable models, sorted; empty = any
  std::vector<std::string> port_names;  // one dynamic host port per name
  std::vector<LabelConstraint> label_constraints;
  std::vector<MaxPerHostConstraint> max_per_host;
  std::string exclusive;  // only hosts labelled paceline.exclusive=<this>; empty = none
  // sla.revocable: fits in the host's unallocated capacity plus its slack (HostState::FreeFor),
  // and is reclaimed when regular work or the regular tasks' usage needs that capacity back.
  bool revocable = false;
  // task.container.image in canonical form (spec/image_ref.h); "" for a plain task. Hosts that
  // have it cached are preferred (scorer image_locality).
  std::string image;

  // Derived by MakeTaskShape; do not set by hand.
  uint64_t signature = 0;         // hash of every field above
  uint64_t static_signature = 0;  // hash of the fields static filters read
  // Hash of what decides which empty hosts could take the task: the static fields and the
  // resources.
  uint64_t fit_signature = 0;

  int64_t gpu_milli() const { return resources.gpu_milli(); }
  bool fractional_gpu() const { return gpu_milli() > 0 && gpu_milli() < 1000; }
  // Whole devices a task takes: N for N GPUs, 1 for a fraction, 0 for none.
  int64_t gpu_devices_needed() const {
    return gpu_milli() == 0 ? 0 : (gpu_milli() < 1000 ? 1 : gpu_milli() / 1000);
  }
  uint32_t num_ports() const { return static_cast<uint32_t>(port_names.size()); }
  // Whether a device of `model` may serve the task (gpu_models is empty or names it).
  bool AcceptsGpuModel(const std::string& model) const {
    return gpu_models.empty() || std::binary_search(gpu_models.begin(), gpu_models.end(), model);
  }

  friend bool operator==(const TaskShape&, const TaskShape&) = default;
  // True when the fields the static filters read are equal.
  bool StaticEquals(const TaskShape& o) const;
};

// Validates and seals a shape: sorts labels and models, computes the signatures. Errors
// (InvalidArgument): negative resources, a GPU amount that is neither whole devices nor a
// fraction of one, a constraint without values where values are needed, max_per_host == 0,
// a max_per_host task_label that is not one of the job labels.
absl::StatusOr<std::shared_ptr<const TaskShape>> MakeTaskShape(TaskShape shape);

// The shape of instance `instance` of a job spec (applies instance overrides).
absl::StatusOr<std::shared_ptr<const TaskShape>> TaskShapeFromSpec(JobId job, const JobSpec& spec,
                                                                   uint32_t instance);

struct PreviousHost {
  HostId host;
  bool stateful = false;  // the instance keeps local state there: keep it on that host
};

struct PlacementTask {
  TaskId id;
  std::shared_ptr<const TaskShape> shape;
  std::optional<PreviousHost> previous;
  std::optional<HostId> required_host;
  // For host holds (filter held_hosts): the caller's id of the task's gang (0: none), and when
  // the task ends at the latest if placed now (its max_running_time; InfiniteFuture: never).
  uint64_t gang = 0;
  absl::Time ends_by = absl::InfiniteFuture();
};

// One task (tasks.size() == 1) or a gang (all or nothing).
struct PlacementRequest {
  std::vector<PlacementTask> tasks;
  // false: if the request stays pending, its Explanation is not worked out (a scan of every
  // host) and comes back with explained == false; the caller keeps an earlier one.
  bool explain = true;

  static PlacementRequest Single(PlacementTask t) {
    PlacementRequest r;
    r.tasks.push_back(std::move(t));
    return r;
  }
  // A gang of `count` instances of one shape, instances first..first+count-1.
  static PlacementRequest Gang(JobId job, uint32_t first, uint32_t count,
                               std::shared_ptr<const TaskShape> shape);
};

}  // namespace paceline::placement
