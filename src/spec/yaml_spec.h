#pragma once
// Pool and job specs as YAML: strict parsing, loading from files, canonical printing and
// one-line summaries. The YAML format is documented in docs/specs.md.
//
// Parsing is strict: unknown keys (with a "did you mean" hint), duplicate keys, wrong types,
// bad units, missing required fields and impossible values are all errors, and every error
// found is reported, not only the first. On failure the status is INVALID_ARGUMENT and its
// message has one line per error, sorted by position:
//
//   FILE:LINE:COLUMN: FIELD.PATH: what is wrong; expected ...
//
// e.g. "job.yaml:12:13: task.resources.memory: unknown unit 'Gb' in '2Gb' (did you mean Gi or
// G?); expected one of Ki Mi Gi ...". Lines and columns are 1-based; errors about the whole
// file (syntax errors, empty input) have no field path. A successfully parsed spec has passed
// ValidatePoolSpec / ValidateJobSpec (spec_validation.h).
//
// Printing is canonical: fixed key order, fields at their default values left out, quantities
// and durations in their shortest exact units. For every spec s accepted by the parser,
// Parse(Print(s)) == s.
//
// No function here throws.
// Thread-safety: pure functions; safe to call from any thread.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline {

// `file_name` only labels the error messages.
absl::StatusOr<PoolSpec> ParsePoolSpec(absl::string_view yaml_text, absl::string_view file_name);
absl::StatusOr<JobSpec> ParseJobSpec(absl::string_view yaml_text, absl::string_view file_name);

// Reads and parses a spec file. NOT_FOUND when it does not exist, FAILED_PRECONDITION when it
// cannot be read (a directory, no permission, larger than kMaxSpecFileBytes); the message names
// the path. Parse errors as above, labelled with `path`.
absl::StatusOr<PoolSpec> LoadPoolSpecFile(const std::string& path);
absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path);
inline constexpr size_t kMaxSpecFileBytes = 16 << 20;
// The text of a spec file, with the errors above; `what` names it in them ("job spec").
absl::StatusOr<std::string> ReadSpecFile(const std::string& path, absl::string_view what);

// Canonical YAML (ends with a newline).
std::string PrintPoolSpec(const PoolSpec& spec);
std::string PrintJobSpec(const JobSpec& spec);

// One line for `paceline job validate`, e.g. "job nightly-etl: batch, 1000 instances,
// priority 10, per instance cpu=1 memory=2Gi disk=1Gi gpu=0.5".
std::string SummarizeJobSpec(const JobSpec& spec);
// e.g. "pool: elastic, reservation cpu=20 memory=64Gi disk=0 gpu=0, limit cpu=100
// memory=256Gi disk=unlimited gpu=8, controller_limit 10%, slack_limit 30%".
std::string SummarizePoolSpec(const PoolSpec& spec);

}  // namespace paceline
