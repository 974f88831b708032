#pragma once
// PoolSpec: what a user asks of a resource pool (the YAML of `paceline pool create -f`).
//
// Per dimension a pool has a reservation (guaranteed minimum), a limit (maximum; unlimited by
// default) and a share (weight for spare capacity, > 0). See docs/specs.md for the YAML form
// and src/resmgr for what the numbers mean at run time.
//
// Thread-safety: a value type.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/resources.h"

namespace paceline {

enum class PoolType : uint8_t {
  kElastic = 0,  // entitlement follows demand (max-min fairness)
  kStatic = 1,   // entitlement is the reservation whatever the demand
};

struct DimSpec {
  int64_t reservation = 0;
  int64_t limit = kUnlimited;
  double share = 1.0;
  friend bool operator==(const DimSpec&, const DimSpec&) = default;
};

// Fair share with memory (docs/resource-manager.md): set on a parent pool, its children's shares
// are weighed by their usage decayed with this half-life, so a child that used much recently
// yields to its siblings. Unset = plain max-min by share.
struct FairShareSpec {
  absl::Duration half_life = absl::Hours(24);
  friend bool operator==(const FairShareSpec&, const FairShareSpec&) = default;
};

struct PoolSpec {
  std::string description;
  PoolType type = PoolType::kElastic;
  std::array<DimSpec, kNumDims> dims{};  // indexed by Dim
  // Percent (0..100] of the reservation usable by controller tasks; unset = no extra cap.
  std::optional<double> controller_limit_percent;
  // Percent (0..100] of the reservation usable by revocable tasks (non-cpu dimensions);
  // unset = no extra cap.
  std::optional<double> slack_limit_percent;
  // How long the pool's finished jobs stay in the live store before they are archived and
  // removed (docs/operations.md, "Retention and archive"); InfiniteDuration = forever; unset =
  // as the parent pool, and at the root as the master's --retain-terminal.
  std::optional<absl::Duration> retain_terminal;
  // How this pool divides among its children: by share weighed by decayed usage when set.
  std::optional<FairShareSpec> fair_share;

  const DimSpec& dim(Dim d) const { return dims[static_cast<int>(d)]; }
  DimSpec& dim(Dim d) { return dims[static_cast<int>(d)]; }
  Resources Reservation() const;
  Resources Limit() const;

  friend bool operator==(const PoolSpec&, const PoolSpec&) = default;
};

absl::string_view PoolTypeName(PoolType t);

}  // namespace paceline
