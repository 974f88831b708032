#pragma once
// PoolTree: the tree of resource pools, addressed by path, with its validation rules.
//
// The tree always holds the root "/" (PoolId 0). The root is implicit: its entitlement is the
// cluster capacity given to each cycle, it cannot be updated or deleted, and its children's
// reservations are not checked against anything at creation (when they exceed the capacity,
// entitlement scales them down; see entitlement.h). Every other pool has a PoolSpec.
//
// Rules, checked on Create and Update (each failure names the pool, the dimension and the
// numbers, e.g. "pool /ads/training: cpu reservation 30 exceeds limit 20"):
//   - valid path (spec/pool_path.h), existing parent, unique sibling names INVALID_ARGUMENT,
//                                                                          NOT_FOUND,
//                                                                          ALREADY_EXISTS
//   - per dimension: reservation >= 0, reservation <= limit, share > 0;
//     controller_limit and slack_limit percents in (0, 100]                INVALID_ARGUMENT
//   - a child's limit <= its parent's limit; the children's reservations
//     sum to at most the parent's reservation (both below the root only)   FAILED_PRECONDITION
// Update may be forced past the relational rules (never past the per-pool rules): the update is
// applied and the returned list says what it broke. A forced tree stays usable: entitlement
// never exceeds any limit on the path and scales infeasible reservations down.
// Delete removes a leaf only (FAILED_PRECONDITION otherwise). Whether a pool holds work
// (jobs only in leaves, delete only empty pools) is checked by the ResourceManager, which owns
// the queues; the tree knows only pools.
//
// Ids: a pool keeps its PoolId for life; ids of deleted pools are not reused. `layout()` is a
// dense breadth-first view (children of a pool are contiguous) for the entitlement
// calculator; it is rebuilt lazily after a change.
//
// Thread-safety: single-threaded; not thread-safe (layout() mutates a cache).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "common/resources.h"
#include "spec/pool_spec.h"

namespace paceline::resmgr {

inline constexpr PoolId kRootPool = PoolId(0);

// Breadth-first, dense view of the live pools. Position 0 is the root; the children of the pool
// at position p occupy positions [child_begin[p], child_end[p]) in creation order.
struct PoolLayout {
  static constexpr uint32_t kNoPosition = UINT32_MAX;
  std::vector<PoolId> id;        // by position
  std::vector<uint32_t> parent;  // by position (root: 0)
  std::vector<uint32_t> child_begin;
  std::vector<uint32_t> child_end;
  std::vector<uint32_t> position;  // by PoolId value; kNoPosition for deleted ids
  std::vector<PoolId> leaves;      // live leaf pools, in breadth-first order
  // Copies of the specs, by position, for the entitlement calculator's inner loops.
  std::vector<Resources> reservation;
  std::vector<Resources> limit;
  std::vector<Resources> slack_cap;  // SlackCap(spec)
  std::vector<std::array<double, kNumDims>> share;
  std::vector<uint8_t> is_static;
};

// Per dimension: reservation * controller_limit_percent / 100, or unlimited when unset.
Resources ControllerCap(const PoolSpec& spec);
// What revocable work of the pool may hold: the limit, and for non-cpu dimensions at most
// reservation * slack_limit_percent / 100 when slack_limit is set.
Resources SlackCap(const PoolSpec& spec);
// OK, or INVALID_ARGUMENT naming `path` for the first per-pool rule that `spec` breaks.
absl::Status ValidatePoolSpec(absl::string_view path, const PoolSpec& spec);

class PoolTree {
 public:
  PoolTree();

  absl::StatusOr<PoolId> Create(absl::string_view path, const PoolSpec& spec);
  // Replaces the spec of an existing non-root pool. Returns what the update broke (always empty
  // unless `force`); without `force` a relational violation is FAILED_PRECONDITION.
  absl::StatusOr<std::vector<std::string>> Update(absl::string_view path, const PoolSpec& spec,
                                                  bool force);
  absl::Status Delete(absl::string_view path);

  std::optional<PoolId> Find(absl::string_view path) const;
  // Find, or NOT_FOUND naming the path.
  absl::StatusOr<PoolId> Lookup(absl::string_view path) const;

  bool Exists(PoolId id) const;
  // The accessors below require Exists(id).
  const PoolSpec& spec(PoolId id) const;
  const std::string& path(PoolId id) const;
  PoolId parent(PoolId id) const;  // the root is its own parent
  const std::vector<PoolId>& children(PoolId id) const;
  bool IsLeaf(PoolId id) const { return children(id).empty(); }
  int depth(PoolId id) const;  // root: 0

  size_t size() const { return live_; }
  // Every PoolId ever handed out is < slot_count().
  size_t slot_count() const { return nodes_.size(); }
  // Increases on every successful Create, Update and Delete.
  uint64_t version() const { return version_; }
  const PoolLayout& layout() const;

  // Every relational rule the current tree breaks (empty unless updates were forced).
  std::vector<std::string> Violations() const;

 private:
  struct Node {
    bool alive = false;
    std::string path;
    PoolSpec spec;
    PoolId parent;
    int depth = 0;
    std::vector<PoolId> children;
  };

  const Node& node(PoolId id) const;
  enum Check : int {
    kCheckParentLimit = 1,          // limit <= the parent's limit
    kCheckSiblingReservations = 2,  // reservation + siblings' <= the parent's reservation
    kCheckChildLimits = 4,          // children's limits <= limit
    kCheckChildReservations = 8,    // children's reservations sum <= reservation
    kCheckAll = 15,
  };
  // Relational rules (`checks`, a set of Check bits) for `spec` placed at pool `self`
  // (nullopt: a new child of `parent`). Rules against the parent do not apply below the root.
  std::vector<std::string> RelationalViolations(PoolId parent, std::optional<PoolId> self,
                                                absl::string_view path, const PoolSpec& spec,
                                                int checks) const;
  void Changed() {
    ++version_;
    layout_dirty_ = true;
  }

  std::vector<Node> nodes_;
  absl::flat_hash_map<std::string, PoolId> by_path_;
  size_t live_ = 0;
  uint64_t version_ = 0;
  mutable bool layout_dirty_ = true;
  mutable PoolLayout layout_;
};

}  // namespace paceline::resmgr
