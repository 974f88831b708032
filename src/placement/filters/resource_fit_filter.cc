#include "placement/filters/resource_fit_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> ResourceFitFilter::Check(const TaskContext& t, const HostState& h) const {
  const Resources& ask = t.shape.resources;
  const Resources& free = h.FreeFor(t.shape.revocable);
  if (ask.FitsIn(free)) return std::nullopt;
  Dim d = *ask.FirstExceeding(free);
  Rejection r =
      Reject(static_cast<uint16_t>(static_cast<int>(d) + (t.shape.revocable ? kNumDims : 0)));
  r.dimension = d;
  r.asked = ask[d];
  r.available = free[d];
  return r;
}

std::optional<Rejection> ResourceFitFilter::CheckEmpty(const TaskContext& t,
                                                       const HostState& h) const {
  const Resources& ask = t.shape.resources;
  std::optional<Dim> d = ask.FirstExceeding(h.capacity());
  if (!d) return std::nullopt;
  Rejection r = Reject(static_cast<uint16_t>(*d));
  r.dimension = *d;
  r.asked = ask[*d];
  r.available = h.capacity()[*d];
  return r;
}

std::string ResourceFitFilter::Describe(const TaskContext&, const Rejection& r) const {
  const bool slack = r.reason >= kNumDims;
  return absl::StrCat("insufficient ", DimName(static_cast<Dim>(r.reason % kNumDims)),
                      slack ? " slack" : "");
}

}  // namespace paceline::placement
