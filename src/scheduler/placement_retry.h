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
// It also says when a gang that fails again is explained again. An explanation scans every host
// (PlacementEngine::Explain), and a gang that backfill admitted while the hosts' free capacity
// is split would have one worked out in every cycle it is offered; so a gang explained less
// than `every` ago is offered with PlacementRequest::explain false, and keeps the explanation
// it has (as a gang that Skip() holds back does). A gang is explained at its first failure, and
// again once `every` has passed.
//
// Gangs of one task that placement sees alike share explanations: two such tasks whose shapes
// differ only in their job, and whose deadlines fall between the same holds' times (so every
// filter, held_hosts included, answers both the same on every host), get the same
// explanation. The caller gives such a gang a key (0: none); a gang whose key was explained
// less than `every` ago is offered without an explanation and takes that one (Shared), so a
// job of many one-task gangs, or many jobs of one shape, cost one scan of the hosts per
// `every` instead of one for each gang that fails.
//
// Pure and single-threaded; time is an input. The state is maps of the gangs that failed, kept
// in step with the scheduler's list of gangs to place by Keep(), and of the shared
// explanations, dropped once older than `every`.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
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
  // Whether a failure of gang `gang` at `now` should be explained: never explained yet,
  // explained `every` or more ago, or Forget() since.
  bool ExplainDue(uint64_t gang, absl::Time now, absl::Duration every) const;
  // Gang `gang`'s failure was explained at `now`.
  void Explained(uint64_t gang, absl::Time now) { explained_[gang] = now; }
  // Gang `gang`'s explanation no longer stands (its tasks' reasons were overwritten).
  void Forget(uint64_t gang) { explained_.erase(gang); }
  // The explanation of a gang like `key`'s (non-zero) given less than `every` before `now`,
  // and when it was given; nullptr when none.
  struct SharedWhy {
    absl::Time at;
    std::string line;
  };
  const SharedWhy* Shared(uint64_t key, absl::Time now, absl::Duration every) const;
  // A gang with key `key` (non-zero) was explained at `now` as `line`.
  void Share(uint64_t key, absl::Time now, std::string line) {
    shared_[key] = SharedWhy{now, std::move(line)};
  }
  // Forgets every gang not in `gangs` (placed, or no longer admitted), and the shared
  // explanations older than `every` at `now`.
  void Keep(const std::vector<uint64_t>& gangs, absl::Time now, absl::Duration every);
  size_t size() const { return failed_.size(); }

 private:
  struct Failure {
    uint64_t signature = 0;  // the members' shape
    uint32_t placed = 0;
    uint64_t seen = 0;   // relax_seq up to which `bound` counts
    uint64_t bound = 0;  // members the hosts relaxed since can take at most
  };
  absl::flat_hash_map<uint64_t, Failure> failed_;
  absl::flat_hash_map<uint64_t, absl::Time> explained_;
  absl::flat_hash_map<uint64_t, SharedWhy> shared_;
};

}  // namespace paceline::scheduler
