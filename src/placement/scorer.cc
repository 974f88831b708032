#include "placement/scorer.h"

namespace paceline::placement {

double UtilisationAfter(const HostState& h, const Resources& ask, bool revocable) {
  const Resources& free = h.FreeFor(revocable);
  double sum = 0;
  int dims = 0;
  for (int i = 0; i < kNumDims; ++i) {
    int64_t cap = h.capacity().at(i);
    if (cap <= 0) continue;
    sum += static_cast<double>(cap - free.at(i) + ask.at(i)) / static_cast<double>(cap);
    ++dims;
  }
  return dims == 0 ? 0 : sum / dims;
}

}  // namespace paceline::placement
