#pragma once
// The reader and the checks of a job's `schedule` (schedule_spec.cc). Internal to src/spec.

#include <optional>

#include "spec/job_spec.h"
#include "spec/validation_internal.h"
#include "spec/yaml_reader.h"

namespace paceline {

namespace yaml_internal {
// Reads `schedule:`; fields that cannot be read keep their defaults (the error is recorded).
ScheduleSpec ReadSchedule(const Field& f, Diagnostics& diag);
}  // namespace yaml_internal

namespace validation_internal {
// Checks spec.schedule, if any: batch jobs only, a cron expression and a time zone that parse,
// a positive starting deadline, bounded keep counts, a name short enough for its runs'.
void CheckSchedule(ErrorSink& sink, const JobSpec& spec);
}  // namespace validation_internal

}  // namespace paceline
