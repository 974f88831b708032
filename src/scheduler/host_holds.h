#pragma once
// HostHolds: the scheduler's side of backfill on hosts (docs/resource-manager.md "Backfill on
// hosts"): the resource manager's HostGate (resmgr/host_gate.h), answered from the hosts.
//
// Asked for gang G (queued; two tasks or more, of one shape; regular work, not pinned to hosts):
//   1. Its members fit on the hosts' free capacity now: admit it (nullopt). With a hold, only
//      its held hosts are counted; every host that got room for a member since the hold last
//      looked (the snapshot's relaxed log) joins the hold first, so the gang takes free hosts
//      as they appear and no later work fills them meanwhile.
//   2. Else, with a hold whose time has not come and whose hosts are all UP: the hold's time.
//      A gang that had room, or whose hosts never free, is not looked at again for `refresh`
//      (a gang waiting for its pool's bounds is asked every cycle): nullopt meanwhile.
//   3. Else a new hold: for each UP host that passes the shape's static filters and is held for
//      no other gang, the times at which its regular tasks end at the latest (their start +
//      max_running_time; now + it for tasks not running yet; never without a limit) and how
//      many members fit after each. The hosts that give every member room soonest are held for
//      G until T, the time the last of them frees, and T is the answer — if T is after the time
//      G's pool bounds allow it (`fits_bounds`); otherwise no host is held (they would sit idle
//      for it) and the answer is nullopt. No such time (tasks without a limit hold too much):
//      nullopt too; admitted, G then waits for hosts, as it would without holds.
// A held host takes only G's tasks and tasks that end by T (placement filter held_hosts), so
// nothing placed meanwhile delays G; its other capacity stays usable by everything else, which
// is what lets small work run beside a waiting gang. Prune releases the holds of gangs that are
// not queued any more (admitted and placed, cancelled), after each placement pass.
//
// Members of one gang are counted with its first member's shape (resources, and at most the
// shape's smallest max_per_host per host); the held hosts are a plan, placement decides.
//
// Thread-safety: single-threaded; time is an argument.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "resmgr/host_gate.h"
#include "resmgr/resource_manager.h"
#include "scheduler/shape_cache.h"

namespace paceline::scheduler {

class HostHolds final : public resmgr::HostGate {
 public:
  struct Parts {
    const resmgr::ResourceManager& rm;
    const jobmgr::JobManager& jobs;
    ShapeCache& shapes;
    placement::ClusterSnapshot& snapshot;
    const placement::PlacementEngine& engine;
  };
  HostHolds(Parts parts, absl::Duration refresh) : p_(parts), refresh_(refresh) {}

  std::optional<absl::Time> HostsFreeAt(resmgr::GangId gang, absl::Time now,
                                        absl::Time fits_bounds) override;
  // Whether G's members fit now on hosts held for nobody. A gang that did not fit is counted
  // again only once the hosts that got room since (the snapshot's relaxed log) could make up
  // what it lacked, so a gang that waits costs a cycle O(hosts relaxed), not O(hosts).
  bool FitsNow(resmgr::GangId gang, absl::Time now) override;
  // Releases the holds of gangs that are no longer queued.
  void Prune();
  // Gangs holding hosts now.
  size_t size() const { return holds_.size(); }

 private:
  struct Hold {
    absl::Time until;  // the held hosts give the gang room by then at the latest
    absl::Time made;
    std::vector<HostId> hosts;  // sorted
    uint64_t seen = 0;          // the snapshot's relax_seq() when hosts were last looked at
  };
  // Holds every host that got room for a member since the hold last looked (they are the
  // first to use; no task that ends later than the hold may take them meanwhile); returns for
  // how many members they have room.
  uint32_t Grab(uint64_t gang, const placement::TaskShape& shape, uint32_t cap, Hold& hold);
  // Whether every held host is still there and UP.
  bool AllUp(const Hold& hold) const;
  // UP, held for no other gang, big enough and passing the shape's static filters.
  bool Eligible(uint64_t gang, const placement::TaskShape& shape,
                const placement::HostState& h) const;
  // What a gang asks of hosts: its first member's shape, its size, and how many of its members
  // one host may take. nullopt: no holds for it (one task, pinned, revocable, unknown).
  struct Ask {
    std::shared_ptr<const placement::TaskShape> shape;
    uint32_t members = 0;
    uint32_t cap = 0;
  };
  std::optional<Ask> AskOf(resmgr::GangId gang);
  // A gang FitsNow found no room for: the members it counted, and the snapshot's relax_seq().
  struct NoRoom {
    uint32_t fit = 0;
    uint64_t seen = 0;
  };
  bool Queued(uint64_t gang) const;
  // Whether the gang's members fit now on hosts held for it or for nobody; a gang that did not
  // is counted again only once the hosts relaxed since could make up what it lacked.
  bool HasRoom(uint64_t gang, const Ask& ask);

  // The hosts that give `members` tasks of `shape` room soonest, and when the last frees;
  // a hold without hosts when they all have room by `by` (now, or when the gang's pool bounds
  // allow it); nullopt when they never do.
  std::optional<Hold> Plan(uint64_t gang, const placement::TaskShape& shape, uint32_t members,
                           absl::Time now, absl::Time by) const;
  // nullopt when they never do.
  std::optional<Hold> Plan(uint64_t gang, const placement::TaskShape& shape, uint32_t members,
                           absl::Time now) const;
  // When the regular task `t` ends at the latest.
  absl::Time EndBound(TaskId t, absl::Time now) const;
  void Release(uint64_t gang);

  Parts p_;
  const absl::Duration refresh_;
  absl::flat_hash_map<uint64_t, Hold> holds_;
  absl::flat_hash_map<uint64_t, NoRoom> no_room_;
};

}  // namespace paceline::scheduler
