#pragma once
// Builders shared by the resource manager's tests and benchmarks: short ways to write pool
// specs, resource vectors and gang requests. Test-only; not part of paceline_resmgr.
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "common/resources.h"
#include "resmgr/pool_tree.h"
#include "resmgr/types.h"
#include "spec/pool_spec.h"

namespace paceline::resmgr::testing {

inline constexpr int64_t kGi = int64_t{1} << 30;

// Whole cores (or fractions) -> millicores.
inline constexpr int64_t Cores(double cores) { return static_cast<int64_t>(cores * 1000); }
inline Resources Cpu(double cores) { return Resources::Of(Cores(cores), 0); }
inline Resources CpuMem(double cores, int64_t mem_gib) {
  return Resources::Of(Cores(cores), mem_gib * kGi);
}

class PoolSpecBuilder {
 public:
  // cpu in cores; limit < 0 means unlimited.
  PoolSpecBuilder& Cpu(double reservation, double limit = -1, double share = 1) {
    return Dim(Dim::kCpu, Cores(reservation), limit < 0 ? kUnlimited : Cores(limit), share);
  }
  // memory in GiB; limit < 0 means unlimited.
  PoolSpecBuilder& MemGi(int64_t reservation, int64_t limit = -1, double share = 1) {
    return Dim(Dim::kMemory, reservation * kGi, limit < 0 ? kUnlimited : limit * kGi, share);
  }
  PoolSpecBuilder& Dim(paceline::Dim d, int64_t reservation, int64_t limit, double share) {
    spec_.dim(d) = DimSpec{reservation, limit, share};
    return *this;
  }
  // The same share in every dimension.
  PoolSpecBuilder& Share(double share) {
    for (paceline::Dim d : kAllDims) spec_.dim(d).share = share;
    return *this;
  }
  PoolSpecBuilder& Static() {
    spec_.type = PoolType::kStatic;
    return *this;
  }
  PoolSpecBuilder& ControllerLimit(double percent) {
    spec_.controller_limit_percent = percent;
    return *this;
  }
  PoolSpecBuilder& SlackLimit(double percent) {
    spec_.slack_limit_percent = percent;
    return *this;
  }
  PoolSpec Build() const { return spec_; }
  operator PoolSpec() const { return spec_; }  // NOLINT: builders convert implicitly

 private:
  PoolSpec spec_;
};

inline PoolSpecBuilder Spec() { return PoolSpecBuilder(); }

}  // namespace paceline::resmgr::testing
