#pragma once
// Filter "resource_fit" (dynamic): the shape's resources fit what the host offers to a task of
// its kind in every dimension (cpu, memory, disk, total GPU): HostState::FreeFor — capacity
// minus regular allocations for regular work, unallocated capacity plus slack for revocable
// work. The reason code is the first short dimension (plus kNumDims for revocable work, which
// reads "insufficient cpu slack"); the rejection carries asked and available in that dimension.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class ResourceFitFilter final : public Filter {
 public:
  absl::string_view name() const override { return "resource_fit"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
