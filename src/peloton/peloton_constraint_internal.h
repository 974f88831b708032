#pragma once
// Peloton's placement constraints converted into Paceline's. Internal to src/peloton.
//
// A Peloton label constraint counts, on a candidate host, how often the label key=value occurs
// (kind HOST: among the host's attributes, `hostname` included, so 0 or 1; kind TASK: among the
// labels of the tasks already there) and compares the count with `requirement`.
//   HOST: the comparison is tried at 0 and 1; "only at 1" becomes `host_label in [value]`,
//         "only at 0" becomes `not_in [value]`. A Paceline agent has the label `hostname`.
//   TASK: "count < N" (LESS_THAN N, or EQUAL 0 for N = 1) becomes at most N instances per host
//         among the tasks that carry the job's own value of the label, which must be value.
//         Affinity to other tasks (GREATER_THAN, EQUAL N > 0) is refused.
//   AND: every item converted. OR: only host label constraints that each say "has key=v" for
//         one key become `in [v1, v2, ...]`; any other OR is refused.
// Thread-safety: pure functions over the caller's Context.

#include <map>
#include <string>
#include <vector>

#include "peloton/peloton_internal.h"
#include "spec/job_spec.h"

namespace paceline::peloton {

// Appends what `f` (a Peloton Constraint) says to `out`; `labels` are the task's job labels.
void ConvertConstraint(const Field& f, const std::map<std::string, std::string>& labels,
                       std::vector<Constraint>& out, Context& ctx);

}  // namespace paceline::peloton
