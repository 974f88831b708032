#pragma once
// PlacementRetry: which admitted gangs the scheduler need not offer to placement again yet.
//
// An admitted gang that placement could not place stays admitted and is offered again every
// cycle (SchedulerCore::PlaceAdmitted). For a large gang that is costly: placement holds its
// members one by one on hosts, and when one finds no host it releases them all again. This
// class remembers, for a gang of one shape that failed, how many members the cluster took
// before one found no host (`placed`), and from the snapshot's log of relaxed hosts
// (ClusterSnapshot::RelaxedSince: every host whose free capacity grew) bounds how many more
// members could fit now: the sum, over the hosts relaxed since, of how many members each one's
// free capacity holds. While `placed` + that bound is below the gang's size, placing it again
// would fail again, and Skip() says so.
//
// Why the bound holds: the members share one shape, and each member held on a host lowers by
// one the number of members that host can take, so when member placed+1 found no host the
// cluster could take exactly `placed` members. A host not relaxed since has no more free
// capacity than then; a relaxed one takes at most what its free capacity holds when Skip()
// looks (hosts relaxed again are counted again). Placement only takes what fits, so the bound
// never skips a gang that would be placed. Only gangs whose members ask for no GPU, no port,
// no max_per_host and have no required or previous host are remembered; any other gang is
// always offered. When the log was truncated (RelaxedSince returns nullopt) the gang is
// offered again.
//
// Pure and single-threaded; the state is a map of the gangs that failed, kept in step with
// the scheduler's list of gangs to place by Keep().

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "placement/cluster_snapshot.h"
#include "placement/placement_request.h"

namespace paceline::scheduler {

class PlacementRetry {
 public:
  // Whether `req` (gang `gang`) would fail again in `snap` and need not be offered this
  // cycle. Advances the gang's bound over the hosts relaxed since the last call.
  bool Skip(uint64_t gang, const placement::PlacementRequest& req,
            const placement::ClusterSnapshot& snap);
  // Placement left `req` (gang `gang`) pending after `placed` members were held; `snap` is the
  // snapshot once the plan was applied.
  void Failed(uint64_t gang, const placement::PlacementRequest& req, uint32_t placed,
              const placement::ClusterSnapshot& snap);
  // Forgets every gang not in `gangs` (placed, or no longer admitted).
  void Keep(const std::vector<uint64_t>& gangs);
  size_t size() const { return failed_.size(); }

 private:
  struct Failure {
    uint64_t signature = 0;  // the members' shape
    uint32_t placed = 0;
    uint64_t seen = 0;   // relax_seq up to which `bound` counts
    uint64_t bound = 0;  // members the hosts relaxed since can take at most
  };
  absl::flat_hash_map<uint64_t, Failure> failed_;
};

}  // namespace paceline::scheduler
