#pragma once
// PlacementEngine: maps placement requests (tasks and gangs) to hosts of a ClusterSnapshot and
// returns a Plan; the master (or `paceline sim`) commits it with ApplyPlan().
//
//   Plan plan = engine->Place(requests, snapshot);   // proposes; snapshot unchanged
//   ApplyResult r = ApplyPlan(plan, snapshot);        // the one applier; verifies and commits
//
// Pipeline per task: the profile's static filters (cached per equivalence class and host),
// candidate collection over the free-capacity index, the dynamic filters on each candidate,
// the weighted scorers on each feasible (host, GPU device choice), the best one wins — among
// the candidates held for the task's own gang (ClusterSnapshot::HoldHost), when there are
// any: admission counted the gang's room there and left the other free hosts to others. While
// building a plan the engine holds what it assigned on the snapshot, so tasks of one plan
// never over-commit a host; every hold is removed before Place() returns.
//
// Gangs are all-or-nothing: when a member finds no host, the holds of the members already
// placed are released, no member appears in the plan, and the gang is pending with the failed
// member's explanation.
//
// Every request that is not placed gets an Explanation (explanation.h): hosts considered,
// rejections per filter and reason, the short dimension asked vs best available, and whether
// the request never fits the current cluster.
//
// Scale (nothing scans the cluster per placement):
//   - Equivalence classes: tasks with equal shapes share a class (resolved anti-affinity keys,
//     a walk cursor, and the failure of this plan: once a class found no host, its other tasks
//     in the plan fail at once with the same explanation — holds only grow within a plan, and
//     a gang rollback invalidates these failures).
//   - Static filters (host state, exclusive, labels, GPU models) are evaluated once per static
//     class and host and patched from the snapshot's change log; selective `in` constraints
//     use the snapshot's label index, and a class that few hosts pass walks only those hosts.
//   - The UP hosts are bucketed by free capacity per dimension (FreeIndex); a task walks the
//     buckets of its scarcest dimension from the level of its ask upward (tightest-first,
//     pack) or from the top down (loosest-first, spread); hosts below its ask are never seen
//     (those of the ask's own bucket are skipped on the exact keys the bucket keeps).
//     Regular and revocable tasks see different free capacity (host_state.h): each walks its
//     own index (ClusterSnapshot::free_index(revocable)).
//   - Sampling: the walk stops after `max_candidates` feasible hosts (default 16; 256 once the
//     workload has GPU tasks, ProfileSpec::gpu_max_candidates), like Nomad's
//     limit iterator or Kubernetes' percentageOfNodesToScore. The trade-off: the winner is the
//     best of the first candidates in walk order, not of the whole cluster. With pack the walk
//     order already visits the tightest hosts first, so little is lost; FGD and dot-product
//     see a sample. max_candidates = 0 scores every feasible host (exact; used by the trace
//     replay to compare policies) at O(hosts) per placement. A GPU task that may run on
//     several models, while gpu_model_pressure tells them apart, shares its sample among the
//     models (model_sample.h), walking at most 8 x max_candidates hosts for it.
//   - Anti-affinity classes and the random profile walk round-robin from a per-class cursor
//     that continues after the hosts last looked at (Nomad's rotating iterator), so hosts that
//     already hold an instance are not walked again at every placement.
//   - A class that few hosts pass statically (< 1/8 of the UP hosts, e.g. a selective `in`)
//     walks its own list of hosts instead of the index.
//   A failure is explained by one full scan per class (O(hosts) x filters), and remembered
//   across plans: while none of the hosts the snapshot logged as relaxed since (a task
//   released, a host added or changed) fits the class, it fails at once with that explanation.
//   In a full cluster a waiting class costs O(hosts relaxed) per cycle, not O(hosts).
//
// Ownership: the engine owns its profile, caches and learned workload; it borrows the
// snapshot for the duration of Place(). Thread-safety: single-threaded; one engine per thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "placement/cluster_snapshot.h"
#include "placement/gpu_workload.h"
#include "placement/model_sample.h"
#include "placement/placement_request.h"
#include "placement/plan.h"
#include "placement/profile.h"

namespace paceline::placement {

struct EngineConfig {
  std::string profile = "default";            // a name from ProfileNames()
  std::optional<ProfileSpec> custom_profile;  // used instead of `profile` when set
  // Overrides the profile's max_candidates and gpu_max_candidates; 0 = all feasible hosts.
  std::optional<uint32_t> max_candidates;
  uint64_t seed = 1;  // random-fit scores
  // The target workload of the gpu_fragmentation scorer. Unset: the engine learns it from the
  // requests it is asked to place (a running histogram, its kLearnedTypes heaviest types).
  std::optional<GpuWorkload> workload;
};

class PlacementEngine {
 public:
  static constexpr size_t kLearnedTypes = 64;

  // InvalidArgument / NotFound for a bad profile.
  static absl::StatusOr<std::unique_ptr<PlacementEngine>> Create(EngineConfig config);
  ~PlacementEngine();

  // Places `requests` in order onto `snapshot`. The snapshot is used as scratch (holds) and
  // is restored before returning; it is not committed (see ApplyPlan). Every task must have a
  // shape (crash otherwise). A task already placed in the snapshot is not detected here;
  // ApplyPlan rejects it.
  Plan Place(std::span<const PlacementRequest> requests, ClusterSnapshot& snapshot);

  // Whether a task of `shape` passes every static filter of the profile on `host` (its state,
  // exclusive, labels, GPU models): it could go there once the host has room. O(filters).
  bool PassesStaticFilters(const TaskShape& shape, const HostState& host) const;

  const Profile& profile() const { return profile_; }
  uint32_t max_candidates() const { return max_candidates_; }
  // The workload the gpu_fragmentation scorer measures against (learned or configured).
  const GpuWorkload& workload() const;

 private:
  struct StaticClass;
  struct Class;
  struct Hold {
    uint32_t slot;
    Usage usage;
  };
  struct Choice {
    uint32_t slot = 0;
    GpuShares gpus;
  };

  PlacementEngine(EngineConfig config, Profile profile);

  void BeginPlace(std::span<const PlacementRequest> requests, ClusterSnapshot& snap);
  void EndPlace(ClusterSnapshot& snap);
  Class& ClassFor(const std::shared_ptr<const TaskShape>& shape, ClusterSnapshot& snap);
  StaticClass& StaticClassFor(const std::shared_ptr<const TaskShape>& shape);
  void SyncStatic(StaticClass& st, const ClusterSnapshot& snap);
  bool PassesStatic(const TaskContext& t, const HostState& h) const;
  bool PassesDynamic(const TaskContext& t, const HostState& h) const;
  bool Feasible(const TaskContext& t, const StaticClass& st, const ClusterSnapshot& snap,
                uint32_t slot) const;
  // True when `cls` failed in an earlier plan and none of the hosts relaxed since fits `t`
  // (O(relaxed hosts), not O(hosts)); advances the class's mark.
  bool StillFails(const TaskContext& t, Class& cls, const ClusterSnapshot& snap) const;
  void Collect(const TaskContext& t, Class& cls, const ClusterSnapshot& snap,
               std::vector<uint32_t>& out, PlanStats& stats);
  // Whether `t`'s sample is shared among GPU models (model_sample.h): gpu_model_pressure
  // weighs in and tells hosts apart for it.
  bool SamplesByModel(const TaskContext& t, const ClusterSnapshot& snap) const;
  // A gang takes the hosts held for it first (admission counted its room there, and left the
  // other free hosts to others): when some candidates are held for `gang`, only those stay.
  static void KeepHeldFor(uint64_t gang, const ClusterSnapshot& snap,
                          std::vector<uint32_t>& candidates);
  std::optional<Choice> Choose(const TaskContext& t, const ClusterSnapshot& snap,
                               std::span<const uint32_t> candidates, PlanStats& stats);
  void GpuOptions(const TaskContext& t, const HostState& h, std::vector<GpuShares>& out) const;
  // Why `t` fits no host: per filter, the hosts it rejects first. `st`, synced, spares the
  // static filters on the hosts it passes.
  Explanation Explain(const TaskContext& t, const StaticClass& st,
                      const ClusterSnapshot& snap) const;
  void Evict();

  EngineConfig config_;
  Profile profile_;
  // The profile's max_candidates, or its gpu_max_candidates once the workload has GPU tasks;
  // EngineConfig::max_candidates overrides both. Set at every BeginPlace.
  uint32_t CandidateLimit() const;
  uint32_t max_candidates_;
  int model_pressure_ = -1;  // the profile's gpu_model_pressure scorer (-1: none)
  ModelSample sample_;

  std::weak_ptr<const void> snapshot_;  // the snapshot the caches below describe
  uint64_t plan_seq_ = 0;
  uint64_t epoch_ = 0;     // failure-cache epoch; bumped per plan and per gang rollback
  uint64_t sequence_ = 0;  // placement decisions, for random scores
  absl::flat_hash_map<uint64_t, std::vector<std::unique_ptr<Class>>> classes_;
  absl::flat_hash_map<uint64_t, std::vector<std::unique_ptr<StaticClass>>> static_classes_;
  size_t num_classes_ = 0;
  const TaskShape* last_shape_ = nullptr;  // fast path: consecutive tasks of one shape
  Class* last_class_ = nullptr;

  GpuWorkload learned_;
  GpuWorkload frozen_;  // the learned workload as of this plan
  uint64_t learned_generation_ = 0;
  uint64_t frozen_generation_ = 0;
  ScoreEnv env_;

  std::vector<Hold> holds_;
  // Scratch buffers reused across placements.
  std::vector<uint32_t> candidates_;
  std::vector<GpuShares> options_;
  std::vector<double> active_weights_;
};

}  // namespace paceline::placement
