#pragma once
// Semantic validation of pool and job specs, independent of how they were written down.
//
// The YAML parser (yaml_spec.h) checks syntax, types, units and keys, builds the struct, then
// runs these validators and maps each error's path back to a line and column. The API layer
// runs the same validators on specs that arrive as protobuf, so both paths accept and reject
// exactly the same specs.
//
// Each FieldError names the offending field by path (see field_path.h), says what is wrong and
// what is expected, and lists `related` paths whose values the check depended on (a parser
// uses them to drop follow-on errors when one of those fields was itself unreadable).
//
// Rules, in short (docs/specs.md has the full list): names and strings are valid UTF-8 without
// control characters; non-daemon jobs have 1..kMaxInstances instances, daemon jobs none;
// priority in [kMinPriority, kMaxPriority]; every task asks for cpu > 0 and memory > 0; a GPU
// request is whole devices or a fraction of one; port names match [a-z][a-z0-9_]* and are
// unique; health checks probe one of the task's ports; a volume needs a stateful job; instance
// overrides name existing instances; pool reservations are <= limits and shares > 0.
//
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline {

struct FieldError {
  std::string path;                  // e.g. "task.resources.cpu"; empty = the whole spec
  std::string message;               // "what is wrong; expected ..."
  std::vector<std::string> related;  // other fields the check read, e.g. {"instances"}
  friend bool operator==(const FieldError&, const FieldError&) = default;
};

std::vector<FieldError> ValidatePoolSpec(const PoolSpec& spec);
std::vector<FieldError> ValidateJobSpec(const JobSpec& spec);

// OK, or INVALID_ARGUMENT with one "path: message" line per error.
absl::Status ToStatus(const std::vector<FieldError>& errors);

// Shared limits (also used by the parser).
inline constexpr double kMaxShare = 1'000'000;
// The shortest retention of finished jobs a pool may ask for.
inline constexpr absl::Duration kMinRetainTerminal = absl::Seconds(1);
inline constexpr size_t kMaxNameLength = 128;

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool IsValidUtf8(absl::string_view s);

}  // namespace paceline
