#include "placement/gpu_workload.h"

#include <algorithm>
#include <numeric>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::placement {

void GpuWorkload::Add(const Resources& resources, std::vector<std::string> gpu_models,
                      double weight) {
  std::sort(gpu_models.begin(), gpu_models.end());
  std::string key = absl::StrCat(resources.cpu_milli(), ",", resources.memory_bytes(), ",",
                                 resources.disk_bytes(), ",", resources.gpu_milli(), ",",
                                 absl::StrJoin(gpu_models, "|"));
  auto [it, inserted] = by_key_.try_emplace(std::move(key), types_.size());
  if (inserted) {
    types_.push_back(TaskType{resources, std::move(gpu_models), 0});
    gpu_types_ += resources.gpu_milli() > 0;
  }
  types_[it->second].weight += weight;
  total_weight_ += weight;
  prepared_ = false;
}

GpuWorkload GpuWorkload::Top(size_t k) const {
  std::vector<size_t> order(types_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return types_[a].weight > types_[b].weight; });
  GpuWorkload out;
  for (size_t i = 0; i < order.size() && i < k; ++i) {
    const TaskType& t = types_[order[i]];
    out.Add(t.resources, t.gpu_models, t.weight);
  }
  return out;
}

void GpuWorkload::Prepare() const {
  std::vector<size_t> order(types_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TaskType& x = types_[a];
    const TaskType& y = types_[b];
    if (x.resources.gpu_milli() != y.resources.gpu_milli()) {
      return x.resources.gpu_milli() < y.resources.gpu_milli();
    }
    return x.gpu_models < y.gpu_models;
  });
  groups_.clear();
  sorted_.clear();
  double gpu = 0, cpu = 0, memory = 0;
  for (const TaskType& t : types_) {
    if (t.resources.gpu_milli() <= 0) continue;
    gpu += t.weight * static_cast<double>(t.resources.gpu_milli());
    cpu += t.weight * static_cast<double>(t.resources.cpu_milli());
    memory += t.weight * static_cast<double>(t.resources.memory_bytes());
  }
  cpu_per_gpu_ = gpu > 0 ? cpu / gpu : 0;
  memory_per_gpu_ = gpu > 0 ? memory / gpu : 0;
  for (size_t i : order) {
    const TaskType& t = types_[i];
    bool same = !groups_.empty() && groups_.back().gpu == t.resources.gpu_milli() &&
                types_[groups_.back().models_of].gpu_models == t.gpu_models;
    if (!same) {
      groups_.push_back(Group{t.resources.gpu_milli(), static_cast<uint32_t>(i),
                              static_cast<uint32_t>(sorted_.size()),
                              static_cast<uint32_t>(sorted_.size())});
    }
    sorted_.push_back(Flat{t.resources.cpu_milli(), t.resources.memory_bytes(),
                           t.resources.disk_bytes(), t.weight});
    groups_.back().end = static_cast<uint32_t>(sorted_.size());
  }
  prepared_ = true;
}

double GpuWorkload::Stranding(const HostState& h, const Resources& extra,
                              std::span<const GpuShare> shares) const {
  if (h.gpus().empty() || types_.empty()) return 0;
  if (!prepared_) Prepare();
  if (cpu_per_gpu_ <= 0 && memory_per_gpu_ <= 0) return 0;
  double free_gpu = static_cast<double>(h.free().gpu_milli());
  for (const GpuShare& s : shares) free_gpu -= s.milli;
  if (free_gpu <= 0) return 0;
  const Resources host_free = h.free() - extra;
  double servable = free_gpu;
  if (cpu_per_gpu_ > 0) {
    servable = std::min(servable,
                        std::max(0.0, static_cast<double>(host_free.cpu_milli())) / cpu_per_gpu_);
  }
  if (memory_per_gpu_ > 0) {
    servable = std::min(
        servable, std::max(0.0, static_cast<double>(host_free.memory_bytes())) / memory_per_gpu_);
  }
  return free_gpu - servable;
}

double GpuWorkload::Fragmentation(const HostState& h, const Resources& extra,
                                  std::span<const GpuShare> shares) const {
  const std::vector<GpuDevice>& devs = h.gpus();
  if (devs.empty() || types_.empty() || total_weight_ <= 0) return 0;
  if (!prepared_) Prepare();
  absl::InlinedVector<int64_t, 8> free(devs.size());
  int64_t total_free = 0;
  for (size_t i = 0; i < devs.size(); ++i) free[i] = devs[i].free_milli();
  for (const GpuShare& s : shares) free[s.device] -= s.milli;
  for (int64_t f : free) total_free += f;
  if (total_free <= 0) return 0;
  Resources host_free = h.free() - extra;

  double frag = 0;
  for (const Group& g : groups_) {
    bool gpu_fits = true;
    int64_t usable = 0;  // free GPU capacity a task of this group can use
    if (g.gpu > 0) {
      const std::vector<std::string>& models = types_[g.models_of].gpu_models;
      bool any_model = models.empty();
      int64_t full = 0;
      for (size_t i = 0; i < devs.size(); ++i) {
        if (!any_model && !std::binary_search(models.begin(), models.end(), devs[i].model)) {
          continue;
        }
        if (g.gpu >= kMilliPerGpu) {
          if (free[i] == kMilliPerGpu) {
            ++full;
            usable += kMilliPerGpu;
          }
        } else if (free[i] >= g.gpu) {
          usable += free[i];
        }
      }
      gpu_fits = g.gpu >= kMilliPerGpu ? full * kMilliPerGpu >= g.gpu : usable > 0;
    } else {
      usable = total_free;
    }
    double fits_weight = 0;
    double all_weight = 0;
    for (uint32_t i = g.begin; i < g.end; ++i) {
      const Flat& t = sorted_[i];
      all_weight += t.weight;
      if (gpu_fits && t.cpu <= host_free.cpu_milli() && t.memory <= host_free.memory_bytes() &&
          t.disk <= host_free.disk_bytes()) {
        fits_weight += t.weight;
      }
    }
    frag += fits_weight * static_cast<double>(total_free - usable) +
            (all_weight - fits_weight) * static_cast<double>(total_free);
  }
  return frag / total_weight_;
}

absl::flat_hash_map<std::string, double> GpuWorkload::ModelPressure(
    const absl::flat_hash_map<std::string, int64_t>& devices) const {
  double asked = 0;  // all the GPU the workload asks, per unit of weight
  for (const TaskType& t : types_) asked += t.weight * static_cast<double>(t.resources.gpu_milli());
  int64_t cluster = 0;
  for (const auto& [model, n] : devices) cluster += n;
  absl::flat_hash_map<std::string, double> need;  // devices the constrained types need
  if (asked <= 0 || cluster <= 0) return need;
  for (const TaskType& t : types_) {
    if (t.gpu_models.empty() || t.resources.gpu_milli() <= 0) continue;
    // The models it accepts that have devices, each once (a list may repeat one).
    absl::InlinedVector<std::pair<const std::string*, int64_t>, 4> models;
    int64_t accepted = 0;
    for (size_t i = 0; i < t.gpu_models.size(); ++i) {
      if (i > 0 && t.gpu_models[i] == t.gpu_models[i - 1]) continue;
      auto it = devices.find(t.gpu_models[i]);
      if (it == devices.end()) continue;
      models.emplace_back(&it->first, it->second);
      accepted += it->second;
    }
    if (accepted == 0) continue;  // it runs nowhere: it needs no device in particular
    const double share = t.weight * static_cast<double>(t.resources.gpu_milli()) / asked *
                         static_cast<double>(cluster);
    for (const auto& [model, n] : models) {
      need[*model] += share * static_cast<double>(n) / static_cast<double>(accepted);
    }
  }
  for (auto& [model, n] : need) n /= static_cast<double>(devices.at(model));
  return need;
}

}  // namespace paceline::placement
