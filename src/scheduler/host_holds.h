#pragma once
// HostHolds: the scheduler's side of backfill on hosts (docs/resource-manager.md "Backfill on
// hosts"): the resource manager's HostGate (resmgr/host_gate.h), answered from the hosts.
//
// Asked HostsFreeAt about gang G (queued; two tasks or more, of one shape; regular work, not
// pinned to hosts):
//   1. Its members fit on the hosts' free capacity now: admit it (nullopt). With a hold, only
//      its held hosts are counted; hosts that got room for a member since the hold last looked
//      (the snapshot's relaxed log) join the hold first, as many as the members lack, so the
//      gang takes free hosts as they appear and no later work fills them meanwhile. Admitted,
//      it keeps only the held hosts that give its members room (KeepRoom): the others are free
//      for the gangs after it in the same pass, and placement puts it on its own (engine.h).
//   2. Else, with a hold whose time has not come and whose hosts are all UP: the hold's time.
//      A gang that had room, or whose hosts never free, is not looked at again for `refresh`
//      (a gang waiting for its pool's bounds is asked every cycle): nullopt meanwhile. One
//      whose hosts have room by the time its bounds allow it, while it still waits for them,
//      is looked at again once half the time to that has passed (at least `refresh`).
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
// FitsNow is also asked about one-task gangs. Their answers are kept per shape, not per gang
// (Room): the hosts that had room for one when last looked at, brought up to date from the
// snapshot's relaxed log, and handed out one task at a time within an admission pass, so a
// pass does not admit more tasks of a shape than the hosts have room for.
//
// Members of one gang are counted with its first member's shape (resources, and at most the
// shape's smallest max_per_host per host); the held hosts are a plan, placement decides.
//
// Thread-safety: single-threaded; time is an argument.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
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
  // Whether G's members fit now on hosts held for nobody, or held for gangs whose time is no
  // earlier than G's end (now + its max_running_time; placement's held_hosts lets a task that
  // ends by a hold's time use the hold's hosts). A gang that did not fit is counted
  // again only once the hosts that got room since (the snapshot's relaxed log) could make up
  // what it lacked, so a gang that waits costs a cycle O(hosts relaxed + hosts of the holds it
  // may use), not O(hosts).
  bool FitsNow(resmgr::GangId gang, absl::Time now) override;
  // The snapshot's relax_seq(): hosts only gain room through the relaxed log, a hold's hosts
  // are logged as it is released or lengthened, and holds made or shortened only take room.
  uint64_t Version() const override { return p_.snapshot.relax_seq(); }
  // Releases the holds of gangs that are no longer queued; the next FitsNow starts a new pass.
  void Prune();
  // Gangs holding hosts now.
  size_t size() const { return holds_.size(); }
  // How many holds a task that ends by `ends_by` may not use (their time is earlier).
  uint32_t Rejecting(absl::Time ends_by) const;

 private:
  struct Hold {
    absl::Time until;  // the held hosts give the gang room by then at the latest
    absl::Time made;
    std::vector<HostId> hosts;  // sorted
    uint64_t seen = 0;          // the snapshot's relax_seq() when hosts were last looked at
  };
  // What a gang asks of hosts: its first member's shape, its size, and how many of its members
  // one host may take. nullopt: not asked about (pinned, revocable, unknown).
  struct Ask {
    std::shared_ptr<const placement::TaskShape> shape;
    uint32_t members = 0;
    uint32_t cap = 0;
    JobId job;  // its end is jobmgr::DeadlineFrom(job, now)
  };
  std::optional<Ask> AskOf(resmgr::GangId gang);  // MakeAsk, kept while the gang is queued
  std::optional<Ask> MakeAsk(resmgr::GangId gang) const;
  // Holds the hosts that got room for a member since the hold last looked (they are the
  // first to use; no task that ends later than the hold may take them meanwhile), until they
  // have room for the `lacks` members the hold lacks; returns for how many members they have
  // room.
  uint32_t Grab(uint64_t gang, const Ask& ask, uint32_t lacks, Hold& hold);
  // For an admitted gang: keeps the held hosts that give its members room, as many as it takes,
  // and releases the others (hosts still busy, or room it does not need), so that the gangs
  // after it in the same admission pass may plan on them.
  void KeepRoom(uint64_t gang, const Ask& ask, Hold& hold);
  // How long a hold without hosts (room now, by the gang's bounds, or never) stands before
  // the gang's hosts are looked at again: `refresh`; for a gang still waiting for its pool's
  // bounds, half the time its hosts had to give room (they had room by then, and the answer
  // is asked again while half of that time is left), at least `refresh`.
  absl::Duration KeepNoHold(const Hold& hold, absl::Time now, absl::Time fits_bounds) const;
  // Whether every held host is still there and UP.
  bool AllUp(const Hold& hold) const;
  // The hosts a shape may use at all, by slot: UP, big enough, passing the placement's static
  // filters; kept in step with the snapshot's log of static changes, so a gang that is asked
  // again costs O(hosts changed), not a pass of the filters over every host. Shared by the
  // shapes of equal static fields and resources; at most kMaxPasses (then started afresh).
  static constexpr size_t kMaxPasses = 64;
  // The shape something kept per fit_signature was worked out for, and the last other shape
  // found equal to it (static fields and resources; shapes of other jobs), so that shapes that
  // take turns are compared field by field only once.
  struct FitOf {
    std::shared_ptr<const placement::TaskShape> shape;
    std::shared_ptr<const placement::TaskShape> last;
    bool Matches(const std::shared_ptr<const placement::TaskShape>& s);
  };
  struct StaticPass {
    FitOf fit;
    uint64_t seq = 0;  // the snapshot's static_seq() then
    std::vector<uint8_t> pass;
  };
  const std::vector<uint8_t>& PassOf(const std::shared_ptr<const placement::TaskShape>& shape);
  // Whether slot `slot` may take members of `gang`: it passes (PassOf) and is held for no
  // other gang.
  bool Eligible(uint64_t gang, const std::vector<uint8_t>& pass, uint32_t slot) const;
  // A gang FitsNow found no room for: the members it counted, and the snapshot's relax_seq().
  struct NoRoom {
    uint32_t fit = 0;
    uint64_t seen = 0;
  };
  bool Queued(uint64_t gang) const;
  // FitsNow for a one-task gang: a host held for nobody has room for it and this pass has not
  // handed that room out yet, or a host held until its end (`ends_by`) or later has room.
  // Held hosts are looked at once a pass per shape.
  bool OneFitsNow(const Ask& ask, absl::Time ends_by);
  // The hosts held for nobody that had room for one task of a shape when last looked at (a
  // superset of those that have it now: a slot found full is dropped as it is reached), up to
  // date with the relaxed log at `seen`; `next` and `left` count what this admission pass (`round`)
  // has handed out: the slots before `next`, and `left` more tasks on the slot before it.
  struct Room {
    FitOf fit;
    uint64_t seen = 0;
    std::vector<uint32_t> slots;
    std::vector<uint8_t> listed;  // by slot: in `slots`
    uint64_t round = ~uint64_t{0};
    size_t next = 0;
    uint32_t left = 0;
    // The latest time of a hold whose hosts have room for one, as this pass (`held_round`)
    // first looked (InfinitePast: none).
    uint64_t held_round = ~uint64_t{0};
    absl::Time held_until = absl::InfinitePast();
  };
  Room& RoomOf(const std::shared_ptr<const placement::TaskShape>& shape,
               const std::vector<uint8_t>& pass);
  // How many tasks of `shape` slot `slot` has room for, held for nobody (0 when it is absent,
  // held, or does not pass).
  uint32_t FreeRoom(const placement::TaskShape& shape, const std::vector<uint8_t>& pass,
                    uint32_t slot) const;
  // For how many members of `ask` the hosts held for other gangs have room, counting only the
  // holds whose time is `ends_by` or later (a task that ends by then may use their hosts) and
  // the hosts that pass `ask`'s static filters (`pass`, PassOf); stops counting at `enough`.
  uint32_t HeldRoom(uint64_t gang, const Ask& ask, const std::vector<uint8_t>& pass,
                    absl::Time ends_by, uint32_t enough) const;

  // For how many tasks of `shape` (at most `cap` a host) the hosts of `hold` that pass (`pass`)
  // have room; stops counting at `enough`.
  uint32_t RoomOnHold(const Hold& hold, const placement::TaskShape& shape, uint32_t cap,
                      const std::vector<uint8_t>& pass, uint32_t enough) const;

  // The hosts that give `members` tasks of `shape` room soonest, and when the last frees;
  // a hold without hosts when they all have room by `by` (now, or when the gang's pool bounds
  // allow it); nullopt when they never do.
  std::optional<Hold> Plan(uint64_t gang, const Ask& ask, absl::Time now, absl::Time by);
  // When the regular task `t` ends at the latest; `settled`: the bound stays as it is while
  // the task runs (it runs, or has no limit).
  struct Bound {
    absl::Time at;
    bool settled = false;
  };
  Bound EndBound(TaskId t, absl::Time now) const;
  // What a host's regular tasks free, and when at the latest.
  struct End {
    absl::Time at;
    Resources resources;
  };
  // The ends of slot `slot`'s regular tasks at `now`, soonest first (`ends_`). Settled bounds
  // are kept per host until its usage changes (HostState::version), so a plan asks the job
  // manager only about tasks that do not run yet; a task killed since is counted at its
  // settled bound until it leaves the host (a later end: a plan never counts on room early).
  std::span<const End> EndsOf(uint32_t slot, absl::Time now);
  void Release(uint64_t gang);

  Parts p_;
  const absl::Duration refresh_;
  absl::flat_hash_map<uint64_t, Hold> holds_;
  absl::flat_hash_map<uint64_t, NoRoom> no_room_;
  absl::flat_hash_map<uint64_t, StaticPass> pass_;  // by static signature and resources
  absl::flat_hash_map<uint64_t, std::optional<Ask>> asks_;
  absl::flat_hash_map<uint64_t, Room> rooms_;  // by static signature and resources
  // The last one-task gang OneFitsNow said no to in this pass (`round`): its shape and end.
  struct LastNo {
    uint64_t round = ~uint64_t{0};
    std::shared_ptr<const placement::TaskShape> shape;
    absl::Time ends_by;
  };
  LastNo last_no_;
  size_t kept_ = 0;      // entries of asks_ and no_room_ after the last sweep (Prune)
  uint64_t rounds_ = 0;  // admission passes begun (Prune ends one)
  struct HostEnds {
    uint64_t version = ~uint64_t{0};  // HostState::version() when `settled` was made
    std::vector<End> settled;         // soonest first
    std::vector<std::pair<TaskId, Resources>> unsettled;
  };
  std::vector<HostEnds> host_ends_;  // by slot
  std::vector<End> ends_;            // EndsOf's answer
};

}  // namespace paceline::scheduler
