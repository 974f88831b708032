#pragma once
// Profile: which filters run in which order, which scorers with which weights, how candidate
// hosts are walked and how many feasible candidates are scored. profile.cc is THE one place
// where the filters and scorers are registered by name and where the default order and
// weights of every named profile are written down; the master's config picks a profile by
// name (EngineConfig::profile) or passes a custom ProfileSpec.
//
// Named profiles (policy scorers and their weights):
//   default      pack 1 + gpu_fragmentation 16 + gpu_stranding 32 + gpu_model_pressure 32,
//                tightest-first walk (fragmentation, stranding and model pressure decide on GPU
//                hosts, packing breaks their ties and decides alone on hosts without GPUs;
//                docs/placement.md says how the weights were chosen)
//   spread       spread 1, loosest-first walk
//   best-fit     pack 1
//   random-fit   random 1, rotating walk
//   dot-product  dot_product 1
//   gpu-packing  gpu_packing 1
//   fgd          gpu_fragmentation 1
// Every profile scores the first 16 feasible hosts of its walk, 256 once the workload has GPU
// tasks. Every profile runs every filter and adds previous_host (weight 128) and
// stateful_sticky (weight 256), above the sum of the policy weights, so that restarts and stateful
// instances stay on their host whenever it still fits, whatever the policy.
//
// Thread-safety: a built Profile is immutable; its filters and scorers are single-threaded.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/filter.h"
#include "placement/scorer.h"

namespace paceline::placement {

// The order in which the engine visits hosts while collecting feasible candidates. It matters
// when max_candidates bounds the search (the first feasible hosts found are the ones scored).
enum class WalkOrder : uint8_t {
  kTightestFirst,  // least free capacity first, in the task's scarcest dimension (pack)
  kLoosestFirst,   // most free capacity first (spread)
  kRotating,       // round-robin over the hosts from a per-class cursor (random, anti-affinity)
};
absl::string_view WalkOrderName(WalkOrder w);

struct ScorerWeight {
  std::string scorer;
  double weight = 1.0;
};

struct ProfileSpec {
  std::string name;
  std::vector<std::string> filters;  // static filters first
  std::vector<ScorerWeight> scorers;
  WalkOrder walk = WalkOrder::kTightestFirst;
  // Feasible hosts scored per placement (Nomad's limit iterator, Kubernetes'
  // percentageOfNodesToScore); 0 = every feasible host (exact, O(hosts) per placement).
  uint32_t max_candidates = 16;
  // The same once the target workload has GPU tasks (0: max_candidates). GPU clusters want a
  // wider sample: a task that strands or fragments GPUs on the first hosts of the walk has
  // better hosts further on (docs/placement.md, "Candidates").
  uint32_t gpu_max_candidates = 0;
};

class Profile {
 public:
  // InvalidArgument: unknown filter or scorer name, a static filter after a dynamic one, a
  // negative weight.
  static absl::StatusOr<Profile> Build(const ProfileSpec& spec);
  // One of ProfileNames(); NotFound otherwise.
  static absl::StatusOr<Profile> Named(absl::string_view name);

  const ProfileSpec& spec() const { return spec_; }
  const std::vector<std::unique_ptr<Filter>>& filters() const { return filters_; }
  const std::vector<std::unique_ptr<Scorer>>& scorers() const { return scorers_; }
  const std::vector<double>& weights() const { return weights_; }
  // Number of leading static filters.
  size_t num_static_filters() const { return num_static_; }
  bool any_device_aware() const { return any_device_aware_; }

 private:
  ProfileSpec spec_;
  std::vector<std::unique_ptr<Filter>> filters_;
  std::vector<std::unique_ptr<Scorer>> scorers_;
  std::vector<double> weights_;
  size_t num_static_ = 0;
  bool any_device_aware_ = false;
};

// The registries.
std::vector<std::string> FilterNames();  // in the default order
std::vector<std::string> ScorerNames();
std::vector<std::string> ProfileNames();
absl::StatusOr<std::unique_ptr<Filter>> MakeFilter(absl::string_view name);
absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(absl::string_view name);
absl::StatusOr<ProfileSpec> NamedProfileSpec(absl::string_view name);
// A profile from policy weights written "SCORER=WEIGHT+SCORER=WEIGHT..." (e.g.
// "pack=1+gpu_fragmentation=16"), for trying weights in `paceline sim --fill`: those scorers,
// a tightest-first walk, and what every named profile adds (avoid_reclaim, image_locality,
// previous_host, stateful_sticky). Its name is the text. InvalidArgument naming the part that
// is not SCORER=WEIGHT with a known scorer and a non-negative weight.
absl::StatusOr<ProfileSpec> ProfileFromWeights(absl::string_view text);
// A profile name (NamedProfileSpec) or, when the text has a '=', policy weights
// (ProfileFromWeights). InvalidArgument that lists the names and shows the weights' form.
absl::StatusOr<ProfileSpec> ProfileSpecFromText(absl::string_view text);

// How many feasible hosts to score per placement (EngineConfig::max_candidates), as a flag
// gives it: "all" (0: every one), "profile" (nullopt: the profile's own limits) or a positive
// number. InvalidArgument naming what was expected otherwise.
absl::StatusOr<std::optional<uint32_t>> ParseCandidates(absl::string_view text);

}  // namespace paceline::placement
