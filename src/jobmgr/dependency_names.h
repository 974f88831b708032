#pragma once
// ResolveDependencies: turns a spec's `depends_on` entries into job ids, as the master stores
// them (docs/specs.md "Dependencies"). An id must name a job that exists; a name resolves to the
// newest job of that name in `pool`, except in an update (`current` = the job's spec), where a
// name that is the name of the job the entry at the same place already names keeps that id, so
// that an update may repeat the names it was created with. A job can depend only on jobs that
// exist when it is created, and its dependencies never change, so they can form no cycle.
// NOT_FOUND, naming the entry, for an unknown id or name; the spec is unchanged on error.
// O(jobs) for a name (a scan by id), O(1) for an id.
//
// Thread-safety: reads the JobManager; single-threaded like it.

#include <string>

#include "absl/status/status.h"
#include "jobmgr/job_manager.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

absl::Status ResolveDependencies(JobSpec& spec, const std::string& pool, const JobManager& jobs,
                                 const JobSpec* current = nullptr);

}  // namespace paceline::jobmgr
