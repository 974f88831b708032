#pragma once
// Builders that keep placement tests short: hosts, shapes, tasks and requests. Test-only.
//
// Thread-safety: value builders, no shared state.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "placement/filter.h"
#include "placement/placement_request.h"

namespace paceline::placement::testing {

inline constexpr int64_t kMi = int64_t{1} << 20;
inline constexpr int64_t kGi = int64_t{1} << 30;

class HostBuilder {
 public:
  explicit HostBuilder(uint32_t id) {
    spec_.id = HostId(id);
    spec_.name = absl::StrCat("h", id);
    spec_.capacity = Resources::Of(8000, 32 * kGi, 100 * kGi);
  }
  HostBuilder& Cpu(int64_t milli) {
    spec_.capacity[Dim::kCpu] = milli;
    return *this;
  }
  HostBuilder& MemGi(int64_t gi) {
    spec_.capacity[Dim::kMemory] = gi * kGi;
    return *this;
  }
  HostBuilder& Gpus(int n, const std::string& model = "T4") {
    for (int i = 0; i < n; ++i) spec_.gpu_models.push_back(model);
    return *this;
  }
  HostBuilder& Label(std::string k, std::string v) {
    spec_.labels.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  HostBuilder& Status(HostStatus s) {
    spec_.status = s;
    return *this;
  }
  HostBuilder& Ports(uint32_t first, uint32_t last) {
    spec_.ports.push_back(PortRange{first, last});
    return *this;
  }
  HostSpec Build() const { return spec_; }

 private:
  HostSpec spec_;
};

class ShapeBuilder {
 public:
  explicit ShapeBuilder(uint64_t job = 1) {
    s_.job = JobId(job);
    s_.resources = Resources::Of(1000, 1 * kGi);
  }
  ShapeBuilder& Cpu(int64_t milli) {
    s_.resources[Dim::kCpu] = milli;
    return *this;
  }
  ShapeBuilder& MemGi(int64_t gi) {
    s_.resources[Dim::kMemory] = gi * kGi;
    return *this;
  }
  ShapeBuilder& MemBytes(int64_t bytes) {
    s_.resources[Dim::kMemory] = bytes;
    return *this;
  }
  ShapeBuilder& Gpu(int64_t milli) {
    s_.resources[Dim::kGpu] = milli;
    return *this;
  }
  ShapeBuilder& Models(std::vector<std::string> m) {
    s_.gpu_models = std::move(m);
    return *this;
  }
  ShapeBuilder& Ports(int n) {
    for (int i = 0; i < n; ++i) s_.port_names.push_back(absl::StrCat("p", i));
    return *this;
  }
  ShapeBuilder& Constraint(std::string label, ConstraintOp op, std::vector<std::string> values = {},
                           double number = 0) {
    s_.label_constraints.push_back(
        LabelConstraint{std::move(label), op, std::move(values), number});
    return *this;
  }
  ShapeBuilder& MaxPerHost(uint32_t n, std::string task_label = "") {
    s_.max_per_host.push_back(MaxPerHostConstraint{n, std::move(task_label)});
    return *this;
  }
  ShapeBuilder& JobLabel(std::string k, std::string v) {
    s_.job_labels.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  ShapeBuilder& Exclusive(std::string v) {
    s_.exclusive = std::move(v);
    return *this;
  }
  ShapeBuilder& Revocable(bool r = true) {
    s_.revocable = r;
    return *this;
  }
  ShapeBuilder& Image(std::string ref) {
    s_.image = std::move(ref);
    return *this;
  }
  std::shared_ptr<const TaskShape> Build() const {
    auto s = MakeTaskShape(s_);
    PL_CHECK(s.ok()) << s.status();
    return *s;
  }

 private:
  TaskShape s_;
};

inline PlacementTask Task(uint32_t instance, std::shared_ptr<const TaskShape> shape) {
  PlacementTask t;
  t.id = TaskId{shape->job, instance};
  t.shape = std::move(shape);
  return t;
}

inline PlacementRequest One(uint32_t instance, std::shared_ptr<const TaskShape> shape) {
  return PlacementRequest::Single(Task(instance, std::move(shape)));
}

// `n` one-task requests of `shape`, instances 0..n-1.
inline std::vector<PlacementRequest> Instances(std::shared_ptr<const TaskShape> shape, uint32_t n) {
  std::vector<PlacementRequest> rs;
  for (uint32_t i = 0; i < n; ++i) rs.push_back(One(i, shape));
  return rs;
}

// A TaskContext with its own storage (filters and scorers take references).
struct Ctx {
  Ctx(PlacementTask t, ClusterSnapshot* snap = nullptr) : task(std::move(t)) {
    if (snap == nullptr) return;
    for (const auto& [k, v] : task.shape->job_labels) {
      keys.job_label_pairs.push_back(snap->InternLabelPair(k, v));
    }
    for (const MaxPerHostConstraint& m : task.shape->max_per_host) {
      AntiAffinityKey key;
      key.max_per_host = m.max_per_host;
      if (!m.task_label.empty()) {
        key.per_job = false;
        for (const auto& [k, v] : task.shape->job_labels) {
          if (k == m.task_label) key.label_pair = snap->InternLabelPair(k, v);
        }
      }
      keys.max_per_host.push_back(key);
    }
  }
  TaskContext get() const { return TaskContext{task, *task.shape, keys}; }
  PlacementTask task;
  ShapeKeys keys;
};

// Commits `shape` as task (job, instance) on `host` with the given devices and ports.
inline absl::Status Put(ClusterSnapshot& snap, uint32_t host, uint32_t instance,
                        std::shared_ptr<const TaskShape> shape, GpuShares gpus = {},
                        std::vector<uint32_t> ports = {}) {
  Assignment a;
  a.task = TaskId{shape->job, instance};
  a.host = HostId(host);
  a.shape = std::move(shape);
  a.gpus = std::move(gpus);
  a.ports = std::move(ports);
  return snap.Commit(a);
}

// An engine with the named profile (and max_candidates when given); crashes on a bad one.
inline std::unique_ptr<PlacementEngine> Engine(const std::string& profile = "default",
                                               std::optional<uint32_t> candidates = std::nullopt) {
  EngineConfig c;
  c.profile = profile;
  c.max_candidates = candidates;
  auto e = PlacementEngine::Create(c);
  PL_CHECK(e.ok()) << e.status();
  return std::move(*e);
}

}  // namespace paceline::placement::testing
