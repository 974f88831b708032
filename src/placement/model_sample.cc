#include "placement/model_sample.h"

#include <algorithm>

namespace paceline::placement {

bool ModelSample::Begin(const TaskContext& t, const ClusterSnapshot& snap, size_t limit) {
  shape_ = &t.shape;
  taken_.clear();
  size_t k = 0;
  for (const auto& [model, devices] : snap.gpu_devices_by_model()) {
    if (devices > 0 && shape_->AcceptsGpuModel(model)) ++k;
  }
  share_ = k < 2 ? 0 : (limit + k - 1) / k;
  return share_ != 0;
}

bool ModelSample::Admit(const HostState& h) {
  if (share_ == 0) return true;
  const auto& devices = h.gpus();
  auto dev = std::find_if(devices.begin(), devices.end(),
                          [&](const GpuDevice& d) { return shape_->AcceptsGpuModel(d.model); });
  if (dev == devices.end()) return true;  // not a GPU host the filters passed: nothing to share
  for (Taken& t : taken_) {
    if (*t.model == dev->model) {
      if (t.count >= share_) return false;
      ++t.count;
      return true;
    }
  }
  taken_.push_back(Taken{&dev->model, 1});
  return true;
}

}  // namespace paceline::placement
