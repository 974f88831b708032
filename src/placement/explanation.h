#pragma once
// Explanation: why a placement attempt failed — the structured "why pending" of a task.
//
// Built by the engine when a request finds no feasible host: every host of the snapshot is run
// through the filters in the profile's order and counted under the first filter (and reason)
// that rejects it. Resource-like reasons carry the dimension, the amount asked and the best
// amount any considered host has. `never_fits` says that no host of the current cluster could
// take the task even empty and UP (bigger than every host, a GPU model nobody has, labels no
// host carries), so the task will not become placeable by waiting.
//
// OneLine() is what `paceline task get` / `job get` print, e.g.
//   0/50,000 hosts: 41,200 insufficient memory (asked 64Gi, best 48Gi), 8,800 zone not in [a b]
//   never fits any of 3 hosts: 3 insufficient memory (asked 512Gi, largest 384Gi)
//   gang of 10,000 (9,876 placed, released): 0/50,000 hosts: 50,000 fewer than 1 free GPUs
//
// Thread-safety: a value type.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/resources.h"

namespace paceline::placement {

struct RejectionCount {
  std::string filter;  // filter name, e.g. "resource_fit"
  std::string reason;  // e.g. "insufficient memory", "zone not in [a b]"
  int64_t hosts = 0;
  std::optional<Dim> dimension;  // set for resource-like reasons
  int64_t asked = 0;             // in the dimension's unit
  int64_t best_available = 0;    // the most any counted host has (largest capacity if never_fits)
  friend bool operator==(const RejectionCount&, const RejectionCount&) = default;
};

struct Explanation {
  int64_t hosts_considered = 0;            // hosts in the snapshot
  int64_t hosts_feasible = 0;              // 0 when the attempt failed
  std::vector<RejectionCount> rejections;  // most hosts first
  bool never_fits = false;
  std::vector<RejectionCount> never_fits_reasons;  // same, counted on empty, UP hosts
  uint32_t gang_size = 1;
  uint32_t gang_placed = 0;  // members placed (then released) before one failed
  // false: the request asked for no explanation (PlacementRequest::explain); only gang_size and
  // gang_placed are set.
  bool explained = true;

  // The resource dimension that ran short on the most hosts, if any.
  const RejectionCount* ShortestResource() const;
  std::string OneLine() const;
  friend bool operator==(const Explanation&, const Explanation&) = default;
};

// 50000 -> "50,000".
std::string WithThousands(int64_t n);
// Readable amount in a dimension: cpu "2.5", memory "48Gi", gpu "0.5".
std::string FormatAmount(Dim d, int64_t v);

}  // namespace paceline::placement
