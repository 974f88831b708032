#pragma once
// Pool and job specs embedded in a larger YAML document, such as the pools and jobs of a
// `paceline sim` scenario (src/sim/scenario.h). The spec is read with the very rules of
// ParsePoolSpec / ParseJobSpec (yaml_spec.h), then validated (spec_validation.h); every error,
// parse or semantic, goes to `diag` with the spec's field path as a prefix
// ("jobs[2].spec.task.resources.memory") and its line and column in the enclosing document.
//
// Fields that cannot be read keep their defaults; check diag.ok() before using the spec.
// Thread-safety: pure functions over the caller's Diagnostics.

#include "spec/job_spec.h"
#include "spec/pool_spec.h"
#include "spec/yaml_reader.h"

namespace paceline::yaml_internal {

PoolSpec ReadEmbeddedPoolSpec(const Field& f, Diagnostics& diag);
// A task with neither command nor container runs `default_command` (empty: it is required).
JobSpec ReadEmbeddedJobSpec(const Field& f, Diagnostics& diag,
                            absl::string_view default_command = "");

}  // namespace paceline::yaml_internal
