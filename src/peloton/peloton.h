#pragma once
// Peloton's job and resource-pool configs (the v0 JobConfig and ResourcePoolConfig YAML that
// Peloton's CLI read), converted into Paceline's JobSpec and PoolSpec.
// docs/migrating-from-peloton.md and examples/peloton/README.md map every field.
//
// Keys are matched with case and '_' folded: Peloton's own files spell them in lower case
// (`instancecount`, `memlimitmb`, as its Go YAML library derives them), its Python tooling in
// camelCase (`instanceCount`), and both work, as does snake_case (`instance_count`). Enums are
// their numbers (`type: 1`) or names (`SERVICE`). `key: null` and `key: []` mean "not set".
//
// Unlike Peloton's CLI, which dropped what it did not know, the conversion is strict: an
// unknown or misspelled key is an error with its line, column and a suggestion; a field that
// Paceline cannot honour (a Mesos container, a custom executor, URIs to fetch, an OR of
// constraints it cannot express, ...) is an error that names the field and says what to use
// instead. Values that Peloton took but that change meaning here are converted with a warning
// that says what became of them; nothing is dropped without one.
//
// Units convert exactly: cpuLimit cores to millicores, memLimitMb and diskLimitMb (Mesos MB,
// which are MiB) to bytes, gpuLimit to milli-GPUs. A value finer than Paceline's unit is an
// error, not a rounding.
//
// A converted job's tasks see Peloton's variables (PELOTON_JOB_ID, PELOTON_INSTANCE_ID,
// PELOTON_TASK_ID = <job>-<instance>, MESOS_SANDBOX, and each port's envName): the command
// starts by exporting them from Paceline's, so the printed spec runs the same anywhere.
//
// Errors: INVALID_ARGUMENT with one line per problem, sorted by position:
// "FILE:LINE:COLUMN: FIELD.PATH: what is wrong; expected ...", as yaml_spec.h. The result has
// passed ValidateJobSpec / ValidatePoolSpec.
//
// Thread-safety: pure functions. No exception leaves them.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline::peloton {

template <typename Spec>
struct Converted {
  Spec spec;
  // "FILE:LINE:COLUMN: FIELD.PATH: what became of it", in the order of the file.
  std::vector<std::string> warnings;
};

// `file_name` only labels the messages.
absl::StatusOr<Converted<JobSpec>> ConvertJob(absl::string_view yaml_text,
                                              absl::string_view file_name);
absl::StatusOr<Converted<PoolSpec>> ConvertPool(absl::string_view yaml_text,
                                                absl::string_view file_name);

// Reads and converts a config file; a file that cannot be read fails as LoadJobSpecFile does.
absl::StatusOr<Converted<JobSpec>> ConvertJobFile(const std::string& path);
absl::StatusOr<Converted<PoolSpec>> ConvertPoolFile(const std::string& path);

enum class ConfigKind { kJob, kPool };
// A pool config has `resources` (a list) and no job keys; anything else is taken for a job.
ConfigKind GuessKind(absl::string_view yaml_text);

}  // namespace paceline::peloton
