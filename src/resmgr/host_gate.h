#pragma once
// HostGate: what admission asks of the hosts before it admits a gang that waits for whole
// hosts (docs/resource-manager.md "Backfill on hosts").
//
// The resource manager counts capacity per pool and knows no hosts; a gang that fits its pool's
// bounds may still find no hosts to hold its members (their free capacity is split over many
// hosts). Admitted, such a gang would hold its pool's capacity while it waits for hosts, and
// the work behind it would wait for both. With a gate, admission asks first: the caller (the
// scheduler) answers nullopt (admit it: its members fit on hosts now, or the caller cannot
// tell), or the time by which hosts held for it will be free at the latest. The gang then stays
// first in its lane, its capacity is reserved from that time (backfill.h), and later gangs of
// the lane are backfilled around it as around any reserved gang.
//
// The gate is asked only with backfill on: about the first gang of a lane when it has two tasks
// or more (HostsFreeAt), and about any gang about to be backfilled ahead of it (FitsNow: one
// that does not fit on hosts now is not backfilled, so that it holds no capacity it cannot use
// and placement does not fail for it).
//
// Thread-safety: called on the caller's thread during ResourceManager::RunCycle.

#include <optional>

#include "absl/time/time.h"
#include "resmgr/types.h"

namespace paceline::resmgr {

class HostGate {
 public:
  virtual ~HostGate() = default;
  // For the first gang of a lane, which fits its pool's bounds from `fits_bounds` (`now`: it
  // fits them now). nullopt: no host stands in its way by then (when it fits its bounds now:
  // admit it). A time after `fits_bounds`: hosts are held for it, free by then (InfiniteFuture:
  // never; it is then admitted and waits for hosts). Hosts are held only when they would free
  // later than the bounds allow the gang: held earlier, they would sit idle for it.
  virtual std::optional<absl::Time> HostsFreeAt(GangId gang, absl::Time now,
                                                absl::Time fits_bounds) = 0;
  // For a gang behind a reserved one, about to be backfilled: whether its members fit on hosts
  // now (true when the caller cannot tell). Holds nothing.
  virtual bool FitsNow(GangId gang, absl::Time now) = 0;
  // FitsNow's false stays false while this is the same (and `now` only grows): a walk that
  // heard only false from the gate need not ask again until it changes.
  virtual uint64_t Version() const = 0;
};

}  // namespace paceline::resmgr
