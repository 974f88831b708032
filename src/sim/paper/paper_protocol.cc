#include "sim/paper/paper_protocol.h"

#include <cmath>
#include <numeric>

namespace paceline::sim::paper {

Arrivals BuildArrivals(const std::vector<PaperPod>& by_name, int64_t gpu_capacity_milli,
                       double ratio, SeededRandom& random) {
  Arrivals a;
  a.order.resize(by_name.size());
  std::iota(a.order.begin(), a.order.end(), size_t{0});
  random.Shuffle(a.order);
  int64_t total = 0;
  for (const PaperPod& p : by_name) total += p.total_gpu();
  const double target = ratio * static_cast<double>(gpu_capacity_milli);
  if (static_cast<double>(total) > target) {
    while (static_cast<double>(total) > target && !a.order.empty()) {
      size_t i = random.Below(a.order.size());
      total -= by_name[a.order[i]].total_gpu();
      a.order.erase(a.order.begin() + static_cast<ptrdiff_t>(i));
    }
    a.shuffled = a.order.size();
    return a;
  }
  a.shuffled = a.order.size();
  while (!by_name.empty()) {
    size_t i = random.Below(by_name.size());
    if (static_cast<double>(total + by_name[i].gpu_milli) > target) break;
    total += by_name[i].total_gpu();
    a.order.push_back(i);
  }
  return a;
}

std::vector<uint32_t> NodeRanks(size_t n, SeededRandom& random) {
  std::vector<uint32_t> rank(n);
  std::iota(rank.begin(), rank.end(), 0u);
  random.Shuffle(rank);
  return rank;
}

void ArrivalCurve::Record(int64_t arrived_milli, int64_t allocated_milli, double frag_milli,
                          int64_t failed) {
  const double gpus = static_cast<double>(gpus_);
  // Python's round(x, 0) rounds halves to even, as nearbyint does in the default mode.
  const int arrived =
      static_cast<int>(std::nearbyint(static_cast<double>(arrived_milli) / gpus / 10));
  const double allocated = std::round(static_cast<double>(allocated_milli) / gpus / 10 * 100) / 100;
  events_.push_back(Event{arrived, allocated, frag_milli / gpus / 10, failed});
}

std::vector<FillPoint> ArrivalCurve::Points(int max_percent) const {
  std::vector<FillPoint> out;
  for (int p = 1; p <= max_percent; ++p) {
    for (int spread : {0, 1}) {
      double allocated = 0, frag = 0;
      int64_t failed = 0;
      int n = 0;
      for (const Event& e : events_) {
        if (std::abs(e.arrived_pct - p) > spread) continue;
        allocated += e.allocated;
        frag += e.frag;
        failed = e.failed;
        ++n;
      }
      if (n == 0) continue;
      allocated = std::round(allocated / n * 100) / 100;
      out.push_back(FillPoint{static_cast<double>(p), 100 - allocated, frag / n, failed});
      break;
    }
    if (static_cast<int>(out.size()) < p) {
      FillPoint last = out.empty() ? FillPoint{0, 100, 0, 0} : out.back();
      last.arrived_pct = p;
      out.push_back(last);
    }
  }
  return out;
}

}  // namespace paceline::sim::paper
