#include "placement/placement_request.h"

#include "spec/image_ref.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace paceline::placement {
namespace {

// absl::Hash-able views of the spec structs.
auto ConstraintTuple(const LabelConstraint& c) {
  return std::make_tuple(c.label, static_cast<int>(c.op), c.values, c.number);
}

uint64_t StaticHash(const TaskShape& s) {
  std::vector<std::tuple<std::string, int, std::vector<std::string>, double>> cs;
  for (const LabelConstraint& c : s.label_constraints) cs.push_back(ConstraintTuple(c));
  return absl::Hash<std::tuple<decltype(cs), std::vector<std::string>, int64_t, std::string>>()(
      std::make_tuple(cs, s.gpu_models, s.gpu_devices_needed(), s.exclusive));
}

uint64_t FullHash(const TaskShape& s) {
  std::vector<std::pair<uint32_t, std::string>> mph;
  for (const MaxPerHostConstraint& m : s.max_per_host)
    mph.emplace_back(m.max_per_host, m.task_label);
  std::vector<int64_t> res(kNumDims);
  for (int i = 0; i < kNumDims; ++i) res[i] = s.resources.at(i);
  return absl::Hash<std::tuple<uint64_t, uint64_t, decltype(s.job_labels), std::vector<int64_t>,
                               std::vector<std::string>, decltype(mph), bool, std::string>>()(
      std::make_tuple(s.static_signature, s.job.value(), s.job_labels, res, s.port_names, mph,
                      s.revocable, s.image));
}

uint64_t FitHash(const TaskShape& s) {
  std::array<int64_t, kNumDims> res{};
  for (int i = 0; i < kNumDims; ++i) res[i] = s.resources.at(i);
  return absl::Hash<std::pair<uint64_t, decltype(res)>>()(std::make_pair(s.static_signature, res));
}

}  // namespace

bool TaskShape::StaticEquals(const TaskShape& o) const {
  return label_constraints == o.label_constraints && gpu_models == o.gpu_models &&
         gpu_devices_needed() == o.gpu_devices_needed() && exclusive == o.exclusive;
}

absl::StatusOr<std::shared_ptr<const TaskShape>> MakeTaskShape(TaskShape shape) {
  if (!shape.resources.IsNonNegative()) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources must not be negative: ", shape.resources.ToString()));
  }
  int64_t gpu = shape.gpu_milli();
  if (gpu > 1000 && gpu % 1000 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gpu must be whole devices or a fraction of one device, got ", gpu, " milli-GPUs"));
  }
  for (const LabelConstraint& c : shape.label_constraints) {
    if (c.label.empty()) return absl::InvalidArgumentError("label constraint without a label");
    bool needs_values = c.op == ConstraintOp::kIn || c.op == ConstraintOp::kNotIn;
    if (needs_values && c.values.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "constraint on '", c.label, "' (", ConstraintOpName(c.op), ") needs at least one value"));
    }
  }
  std::sort(shape.job_labels.begin(), shape.job_labels.end());
  for (const MaxPerHostConstraint& m : shape.max_per_host) {
    if (m.max_per_host == 0) return absl::InvalidArgumentError("max_per_host must be >= 1");
    if (!m.task_label.empty()) {
      bool found = std::any_of(shape.job_labels.begin(), shape.job_labels.end(),
                               [&](const auto& kv) { return kv.first == m.task_label; });
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat(
            "max_per_host counts task label '", m.task_label, "' but the job has no such label"));
      }
    }
  }
  std::sort(shape.gpu_models.begin(), shape.gpu_models.end());
  shape.gpu_models.erase(std::unique(shape.gpu_models.begin(), shape.gpu_models.end()),
                         shape.gpu_models.end());
  shape.static_signature = StaticHash(shape);
  shape.fit_signature = FitHash(shape);
  shape.signature = FullHash(shape);
  return std::make_shared<const TaskShape>(std::move(shape));
}

absl::StatusOr<std::shared_ptr<const TaskShape>> TaskShapeFromSpec(JobId job, const JobSpec& spec,
                                                                   uint32_t instance) {
  TaskSpec scratch;
  const TaskSpec& task = spec.TaskFor(instance, scratch);
  TaskShape s;
  s.job = job;
  s.job_labels.assign(spec.labels.begin(), spec.labels.end());
  s.resources = task.resources;
  s.gpu_models = task.gpu_models;
  s.port_names = task.ports;
  for (const Constraint& c : task.constraints) {
    if (const auto* lc = std::get_if<LabelConstraint>(&c)) s.label_constraints.push_back(*lc);
    if (const auto* mc = std::get_if<MaxPerHostConstraint>(&c)) s.max_per_host.push_back(*mc);
  }
  s.exclusive = task.exclusive;
  s.revocable = spec.sla.revocable;
  if (task.container) {
    absl::StatusOr<spec::ImageRef> ref = spec::ParseImageRef(task.container->image);
    if (ref.ok()) s.image = ref->ToString();
  }
  return MakeTaskShape(std::move(s));
}

PlacementRequest PlacementRequest::Gang(JobId job, uint32_t first, uint32_t count,
                                        std::shared_ptr<const TaskShape> shape) {
  PlacementRequest r;
  r.tasks.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    r.tasks.push_back(PlacementTask{TaskId{job, first + i}, shape, std::nullopt, std::nullopt});
  }
  return r;
}

}  // namespace paceline::placement
