#pragma once
// Filter: one hard feasibility rule of the placement pipeline (resources, GPU devices, ports,
// host state, label constraints, anti-affinity, exclusive hosts). A filter looks at one task and
// one host and either passes or returns a structured Rejection: which reason (a filter-specific
// code), and for resource-like rules the dimension with the amount asked and the amount the
// host has. Describe() renders a rejection as the short text of a "why pending" line
// ("insufficient memory", "zone not in [a b]"); the text is built only when explaining, never
// on the hot path.
//
// A filter is *static* when its verdict depends only on the host's static attributes (status,
// labels, exclusive, GPU models, capacity) and the task's shape: the engine then evaluates it
// once per equivalence class and host, and re-evaluates only hosts whose static attributes
// changed. Dynamic filters (free resources, free devices, free ports, anti-affinity counts)
// run on each candidate. A profile lists static filters before dynamic ones.
//
// CheckEmpty() answers "would this host reject the task even if it were empty and UP?" and
// drives the never-fits verdict ("bigger than every host", "a GPU model nobody has"); resource
// rejections then carry the host's capacity as `available`.
//
// Filters are stateless and const; single-threaded use (no synchronisation needed anyway).

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "common/resources.h"
#include "placement/host_state.h"
#include "placement/placement_request.h"

namespace paceline::placement {

// Anti-affinity key of one MaxPerHostConstraint, resolved against the snapshot.
struct AntiAffinityKey {
  bool per_job = true;      // count the job's tasks; otherwise count `label_pair`
  uint32_t label_pair = 0;  // interned (task_label, value of the job's label)
  uint32_t max_per_host = 1;
};

// Per-shape values resolved against the snapshot once per equivalence class.
struct ShapeKeys {
  absl::InlinedVector<uint32_t, 4> job_label_pairs;  // what a placed task adds to the counts
  absl::InlinedVector<AntiAffinityKey, 2> max_per_host;
};

// What a filter or scorer sees of the task being placed.
struct TaskContext {
  const PlacementTask& task;
  const TaskShape& shape;
  const ShapeKeys& keys;
};

struct Rejection {
  absl::string_view filter;      // the filter's name()
  uint16_t reason = 0;           // filter-specific code; equal codes render to equal text
  std::optional<Dim> dimension;  // for resource-like rejections
  int64_t asked = 0;             // amount asked in `dimension` (or a count: GPUs, ports)
  int64_t available = 0;         // amount the host has
};

class Filter {
 public:
  virtual ~Filter() = default;
  virtual absl::string_view name() const = 0;
  virtual bool is_static() const = 0;
  virtual std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const = 0;
  virtual std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const = 0;
  virtual std::string Describe(const TaskContext& t, const Rejection& r) const = 0;

 protected:
  Rejection Reject(uint16_t reason = 0) const { return Rejection{name(), reason, {}, 0, 0}; }
};

}  // namespace paceline::placement
