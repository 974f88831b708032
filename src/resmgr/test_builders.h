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
#include "resmgr/gang.h"
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
  PoolSpecBuilder& FairShare(absl::Duration half_life) {
    spec_.fair_share = FairShareSpec{half_life};
    return *this;
  }
  PoolSpec Build() const { return spec_; }
  operator PoolSpec() const { return spec_; }  // NOLINT: builders convert implicitly

 private:
  PoolSpec spec_;
};

inline PoolSpecBuilder Spec() { return PoolSpecBuilder(); }

// A gang of `tasks` identical tasks; by default job = gang id, instances 0..n-1, preemptible,
// priority 0.
class GangBuilder {
 public:
  GangBuilder(uint64_t id, PoolId pool) {
    r_.id = GangId(id);
    r_.job = JobId(id);
    r_.pool = pool;
  }
  GangBuilder& Job(uint64_t job, uint32_t first_instance = 0) {
    r_.job = JobId(job);
    first_instance_ = first_instance;
    return *this;
  }
  GangBuilder& Tasks(int n, const Resources& each) {
    tasks_ = n;
    each_ = each;
    return *this;
  }
  GangBuilder& Priority(int32_t p) {
    r_.priority = p;
    return *this;
  }
  GangBuilder& NonPreemptible() {
    r_.sla = SlaClass::kNonPreemptible;
    return *this;
  }
  GangBuilder& Revocable() {
    r_.sla = SlaClass::kRevocable;
    return *this;
  }
  GangBuilder& Controller() {
    r_.controller = true;
    return *this;
  }
  GangBuilder& MaxRunning(uint32_t n) {
    r_.max_running_instances = n;
    return *this;
  }
  GangBuilder& Limit(absl::Duration d) {  // max_running_time
    r_.max_running_time = d;
    return *this;
  }
  GangBuilder& Estimate(absl::Duration d) {  // expected_running_time
    r_.expected_running_time = d;
    return *this;
  }
  GangRequest Build() const {
    GangRequest r = r_;
    for (int i = 0; i < tasks_; ++i) {
      r.tasks.push_back(
          TaskRequest{TaskId{r.job, first_instance_ + static_cast<uint32_t>(i)}, each_});
    }
    return r;
  }
  operator GangRequest() const { return Build(); }  // NOLINT: builders convert implicitly

 private:
  GangRequest r_;
  int tasks_ = 1;
  Resources each_ = Cpu(1);
  uint32_t first_instance_ = 0;
};

// One gang of one task of `cores` cpus in `pool`.
inline GangBuilder G(uint64_t id, PoolId pool, double cores) {
  return GangBuilder(id, pool).Tasks(1, Cpu(cores));
}

}  // namespace paceline::resmgr::testing
