#include "sim/paper/paper_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace paceline::sim::paper {

PaperPod PaperPod::From(const AlibabaTask& t) {
  PaperPod p;
  p.cpu = t.cpu_milli;
  p.cpu_score = t.cpu_milli > 0 ? t.cpu_milli : kDefaultMilliCpu;
  p.memory_mib = t.memory_mib;
  int64_t milli = std::min<int64_t>(t.gpu_milli, kMilli);
  if (t.num_gpu > 0 && milli > 0) {
    p.gpus = t.num_gpu;
    p.gpu_milli = milli;
  }
  p.models = t.gpu_models;
  return p;
}

std::string PaperPod::affinity() const {
  if (gpus == 0) return "no-gpu";
  if (shares_gpu()) return "share-gpu";
  return absl::StrCat(gpus, "-gpu");
}

PaperNode PaperNode::From(const AlibabaNode& n) {
  PaperNode node;
  node.name = n.name;
  node.model = n.gpus > 0 ? n.model : "";
  node.cpu_capacity = n.cpu_milli;
  node.cpu_left = n.cpu_milli;
  node.memory_left_mib = n.memory_mib;
  node.gpu_left.assign(static_cast<size_t>(n.gpus), kMilli);
  return node;
}

int64_t PaperNode::gpu_left_total() const {
  int64_t total = 0;
  for (int64_t left : gpu_left) total += left;
  return total;
}

int PaperNode::full_free_gpus() const {
  return static_cast<int>(std::count(gpu_left.begin(), gpu_left.end(), kMilli));
}

bool PaperNode::Accessible(const PaperPod& p) const {
  if (p.models.empty()) return true;
  if (model.empty()) return false;
  return std::find(p.models.begin(), p.models.end(), model) != p.models.end();
}

bool PaperNode::CanHostGpus(const PaperPod& p) const {
  int wanted = p.gpus;
  for (int64_t left : gpu_left) {
    if (left >= p.gpu_milli && --wanted <= 0) return true;
  }
  return false;
}

bool PaperNode::Fits(const PaperPod& p) const {
  if (p.cpu > cpu_left || p.memory_mib > memory_left_mib) return false;
  if (p.gpus == 0) return true;
  return !gpu_left.empty() && Accessible(p) && CanHostGpus(p);
}

void PaperNode::Bind(const PaperPod& p, std::span<const int> devices) {
  PL_CHECK(static_cast<int>(devices.size()) == p.gpus) << name << ": " << devices.size();
  cpu_left -= p.cpu;
  memory_left_mib -= p.memory_mib;
  for (int d : devices) {
    PL_CHECK(d >= 0 && static_cast<size_t>(d) < gpu_left.size() && gpu_left[d] >= p.gpu_milli);
    gpu_left[d] -= p.gpu_milli;
  }
  if (p.gpus > 0) ++affinity[p.affinity()];
}

}  // namespace paceline::sim::paper
