#pragma once
// Internal to the placement engine (engine.cc, engine_setup.cc): its tuning constants and the
// equivalence classes it caches per task shape. StaticClass: which hosts pass every static
// filter (labels, devices, host state), kept in sync with the snapshot's change log. Class: a
// shape with its keys, its walk state and the memory of its last failure.
//
// Thread-safety: single-threaded, like the engine.

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "placement/engine.h"

namespace paceline::placement {
namespace engine_internal {

inline constexpr size_t kMaxClasses = 4096;       // evict unused classes beyond this many
inline constexpr uint64_t kEvictAfterPlans = 64;  // a class unused for this many plans may go
inline constexpr uint32_t kSelectiveRatio =
    8;  // walk a class's own hosts if < 1/8 of UP hosts pass
inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// An empty task and empty keys, for a static class's context (immutable constants).
inline const PlacementTask& NoTask() {
  static const PlacementTask* const t = new PlacementTask();
  return *t;
}
inline const ShapeKeys& NoKeys() {
  static const ShapeKeys* const k = new ShapeKeys();
  return *k;
}

}  // namespace engine_internal

struct PlacementEngine::StaticClass {
  std::shared_ptr<const TaskShape> shape;
  std::vector<uint8_t> pass;     // per slot: passes every static filter
  std::vector<uint8_t> in_list;  // per slot: present in `list`
  std::vector<uint32_t> list;    // slots that passed at some point (check `pass`)
  uint32_t pass_count = 0;
  bool built = false;
  uint64_t synced_seq = 0;
  uint64_t synced_plan = 0;
  uint32_t refs = 0;
};

struct PlacementEngine::Class {
  std::shared_ptr<const TaskShape> shape;
  StaticClass* st = nullptr;
  ShapeKeys keys;
  bool rotating = false;  // anti-affinity: walk round-robin from `cursor`
  uint32_t cursor = 0;
  uint64_t failed_epoch = 0;
  // The snapshot's relax_seq() when a placement of this class last failed with nothing of its
  // own gang held (kNever: no such failure). The class still fits nowhere, in later plans too,
  // unless it fits one of the hosts relaxed since (StillFails).
  uint64_t failed_relax = engine_internal::kNever;
  // The ends_by of the task that failed: a task that ends earlier may fit a held host.
  absl::Time failed_ends_by = absl::InfinitePast();
  Explanation failure;
  uint64_t last_plan = 0;
  int walk_dim = 0;
  uint64_t walk_dim_plan = 0;
};

}  // namespace paceline::placement
