#pragma once
// Pieces of the job spec parser shared between job_spec_yaml.cc (the job level) and
// task_spec_yaml.cc (the task template). Internal to src/spec.

#include <cstdint>
#include <limits>
#include <optional>

#include "common/resources.h"
#include "spec/job_spec.h"
#include "spec/yaml_reader.h"

namespace paceline::yaml_internal {

inline constexpr int64_t kMaxCount = std::numeric_limits<uint32_t>::max();

// Reads `task:`; fields that cannot be read keep their defaults (the error is recorded). A task
// with neither command nor container runs `default_command`; when that is empty, the command is
// required.
TaskSpec ReadTask(const Field& f, Diagnostics& diag, absl::string_view default_command = "");

// Reads the task of a role or of an instance override: `base` (the template, or the role's
// task) with the fields of `f` applied. A key given replaces the base's field, except
// `resources` (the dimensions given) and `env` (the variables given; `NAME: null` removes one);
// `health: null`, `readiness: null`, `container: null` and `volume: null` remove the base's.
TaskSpec ReadTaskOver(const Field& f, const TaskSpec& base, Diagnostics& diag);

// Reads a resources map {cpu, memory, disk, gpu}. Dimensions not given come from `base`.
// With `require_cpu_memory`, cpu and memory must be given. Dimensions that cannot be read keep
// their `base` value (the error is recorded); nullopt only when `f` is not a map.
std::optional<Resources> ReadResources(const Field& f, const Resources& base,
                                       bool require_cpu_memory, Diagnostics& diag);

// Reads an env map (names and values are checked later by the validator).
std::optional<std::map<std::string, std::string>> ReadEnv(const Field& f, Diagnostics& diag);

// Reads an unsigned count into `out` when the field is present and valid.
inline void ReadCount(const std::optional<Field>& f, uint32_t& out, Diagnostics& diag,
                      int64_t max = kMaxCount) {
  if (!f) return;
  if (auto v = ReadInt(*f, 0, max, diag)) out = static_cast<uint32_t>(*v);
}

// Reads a value of type T into `out` with `read` when the field is present and valid.
template <typename T, typename Reader>
void ReadInto(const std::optional<Field>& f, T& out, Reader read, Diagnostics& diag) {
  if (!f) return;
  if (auto v = read(*f, diag)) out = std::move(*v);
}

}  // namespace paceline::yaml_internal
