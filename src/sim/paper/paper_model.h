#pragma once
// The cluster and task model of the FGD paper's simulator (Weng et al., USENIX ATC 2023; its
// artifact hkust-adsl/kubernetes-scheduler-simulator), as `paceline sim --protocol fgd` needs
// it to score the paper's baselines exactly as the published runs did. docs/sim.md ("The FGD
// paper's protocol") gives the source of every rule.
//
// A PaperPod is a trace task as the artifact's Kubernetes pod: `gpus` devices of `gpu_milli`
// each (a fraction of one device when gpus == 1 and gpu_milli < 1000), cpu and memory. The
// artifact's policies read a pod's cpu through Kubernetes' non-zero rule (`cpu_score`: 100
// milli-cores when the pod asks none), while the fit check counts what it asks (`cpu`).
// Memory is checked by the fit but read by no policy.
//
// A PaperNode is a node as the policies see it: cpu and memory left, the free milli-GPUs of
// each device in device order, its GPU model, and how many GPU pods of each "affinity"
// (share-gpu, 1-gpu, 2-gpu, ...) it holds (the clustering policy reads them).
//
// Thread-safety: value types.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "sim/alibaba_trace.h"

namespace paceline::sim::paper {

inline constexpr int64_t kMilli = 1000;           // milli-GPUs in one device
inline constexpr int64_t kMaxSpecCpu = 128000;    // the artifact's normalisers (MaxSpecCpu,
inline constexpr int64_t kMaxSpecGpu = 8000;      // MaxSpecGpu): the largest node
inline constexpr int64_t kMaxNodeScore = 100;     // Kubernetes' score range is 0..100
inline constexpr int64_t kDefaultMilliCpu = 100;  // Kubernetes' non-zero cpu request

struct PaperPod {
  int64_t cpu = 0;        // milli-cores asked
  int64_t cpu_score = 0;  // what the policies read: cpu, or kDefaultMilliCpu when cpu is 0
  int64_t memory_mib = 0;
  int gpus = 0;                     // devices; 0 for a CPU-only pod
  int64_t gpu_milli = 0;            // per device; 0 for a CPU-only pod
  std::vector<std::string> models;  // acceptable GPU models; empty = any

  // A trace task: gpu_milli above 1000 reads as 1000, and a task asking GPUs but no milli-GPUs
  // asks none (the artifact's pod_csv_to_yaml.py and GetGpuMilliFromPodAnnotation).
  static PaperPod From(const AlibabaTask& t);

  int64_t total_gpu() const { return int64_t{gpus} * gpu_milli; }
  bool shares_gpu() const { return gpus == 1 && gpu_milli > 0 && gpu_milli < kMilli; }
  // "no-gpu", "share-gpu" or "<N>-gpu" (GetGpuAffinityFromPodAnnotation).
  std::string affinity() const;
  friend bool operator==(const PaperPod&, const PaperPod&) = default;
};

struct PaperNode {
  std::string name;
  std::string model;  // empty for a node without GPUs
  int64_t cpu_capacity = 0;
  int64_t cpu_left = 0;
  int64_t memory_left_mib = 0;
  std::vector<int64_t> gpu_left;        // free milli-GPUs per device, in device order
  std::map<std::string, int> affinity;  // GPU pods held, per PaperPod::affinity()

  static PaperNode From(const AlibabaNode& n);

  int64_t gpu_left_total() const;
  int full_free_gpus() const;
  // The pod accepts this node's GPU model (IsNodeAccessibleToPod).
  bool Accessible(const PaperPod& p) const;
  // `p.gpus` devices each have at least p.gpu_milli free (CanNodeHostPodOnGpuMemory).
  bool CanHostGpus(const PaperPod& p) const;
  // The filters the published runs enabled: Kubernetes' resource fit (cpu and memory as asked)
  // and Open-Gpu-Share (a GPU pod needs a node with GPUs of an accepted model and devices
  // with room).
  bool Fits(const PaperPod& p) const;
  // Takes the pod's cpu, memory and `devices` (one per device asked; its gpu_milli on each).
  void Bind(const PaperPod& p, std::span<const int> devices);
};

}  // namespace paceline::sim::paper
