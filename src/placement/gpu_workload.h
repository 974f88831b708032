#pragma once
// GpuWorkload: a distribution of task types (resources + acceptable GPU models, with weights)
// and the fragmentation measure of "Fragmentation Gradient Descent" (Weng et al., USENIX ATC
// 2023), implemented here from the paper's definition.
//
// The fragmentation of a host with respect to one task type m is the part of the host's
// unallocated GPU capacity that m cannot use:
//   - if m cannot run on the host at all (cpu, memory, disk, or GPUs short), all of the host's
//     unallocated GPU capacity;
//   - otherwise the unallocated capacity of the devices m cannot use: devices of a model m does
//     not accept, and devices whose free amount is below min(m's GPU ask, one device)
//     (a whole-GPU task cannot use a half-used device; a 0.5 task cannot use 0.3 left over).
// The fragmentation of a host with respect to the workload is the weighted mean over types:
// the expected unusable unallocated GPU capacity for a task drawn from the workload. FGD places
// a task where this measure grows least (see scorers/gpu_fragmentation_scorer.h).
//
// Stranding, the second measure: the host's free GPU that its free cpu and memory cannot serve
// at the workload's own ratios. With c = cpu per milli-GPU and m = memory per milli-GPU over the
// GPU-asking types (weighted by their GPU ask), a host with F free milli-GPUs, free cpu C and
// free memory M can serve min(F, C / c, M / m) of them; the rest, F - min(F, C/c, M/m), is
// stranded: no mix of the workload's GPU tasks can use it, however they arrive. Fragmentation
// looks at one next task; stranding at everything the host still has to offer, so it sees a
// CPU-only task eating the cpu that the host's idle GPUs will need long before a single task
// stops fitting.
//
// Model pressure, the third: how much of each GPU model the workload's model-constrained tasks
// need. If the workload filled the cluster, a constrained type would take its share of all the
// GPU asked, spread over the models it accepts in proportion to their devices; a model's
// pressure is what the constrained types would take of it over what it has. 1.0: they alone
// would need every device of the model; 0: nothing needs this model in particular. An
// unconstrained task placed on a high-pressure model takes a device that constrained tasks
// have nowhere else to find (scorers/gpu_model_pressure_scorer.h).
//
// Cost: one pass over the host's devices per distinct (GPU ask, models) group and a few
// compares per type; keep the distribution small (Top(k)).
//
// Thread-safety: a value type; Fragmentation() is const and reentrant.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/resources.h"
#include "placement/host_state.h"

namespace paceline::placement {

class GpuWorkload {
 public:
  struct TaskType {
    Resources resources;
    std::vector<std::string> gpu_models;  // sorted; empty = any
    double weight = 0;
  };

  // Adds `weight` to the type (resources, models); models need not be sorted.
  void Add(const Resources& resources, std::vector<std::string> gpu_models, double weight = 1.0);
  // The `k` heaviest types (ties by first added).
  GpuWorkload Top(size_t k) const;

  bool empty() const { return types_.empty(); }
  // Some type asks for GPUs.
  bool has_gpu_tasks() const { return gpu_types_ > 0; }
  size_t size() const { return types_.size(); }
  double total_weight() const { return total_weight_; }
  const std::vector<TaskType>& types() const { return types_; }

  // Expected unusable unallocated GPU capacity of `h`, in milli-GPUs, after it additionally
  // takes `extra` resources and `shares` of its devices (both empty: the host as it is).
  // 0 for a host without GPUs or an empty workload.
  double Fragmentation(const HostState& h, const Resources& extra = Resources(),
                       std::span<const GpuShare> shares = {}) const;
  // Free milli-GPUs of `h` (after `extra` and `shares`, as above) that its free cpu and memory
  // cannot serve at the workload's ratios; 0 for a host without GPUs or a workload without GPU
  // tasks.
  double Stranding(const HostState& h, const Resources& extra = Resources(),
                   std::span<const GpuShare> shares = {}) const;
  // Each model's pressure (above) against `devices` (devices per model in the cluster). Only
  // models some constrained type accepts appear; empty when no type is constrained, or when
  // none of their models has a device. O(types x models accepted).
  absl::flat_hash_map<std::string, double> ModelPressure(
      const absl::flat_hash_map<std::string, int64_t>& devices) const;

 private:
  struct Group {
    int64_t gpu = 0;
    uint32_t models_of = 0;  // index in types_ of a type with this group's models
    uint32_t begin = 0;      // types [begin, end) in sorted_
    uint32_t end = 0;
  };
  struct Flat {
    int64_t cpu, memory, disk;
    double weight;
  };
  void Prepare() const;

  std::vector<TaskType> types_;
  absl::flat_hash_map<std::string, size_t> by_key_;
  double total_weight_ = 0;
  size_t gpu_types_ = 0;
  // Derived, rebuilt lazily after Add.
  mutable bool prepared_ = false;
  mutable std::vector<Group> groups_;
  mutable std::vector<Flat> sorted_;
  mutable double cpu_per_gpu_ = 0;     // milli-cores per milli-GPU; 0: no GPU types
  mutable double memory_per_gpu_ = 0;  // bytes per milli-GPU
};

}  // namespace paceline::placement
