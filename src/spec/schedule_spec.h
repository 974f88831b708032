#pragma once
// A cron job's schedule in the spec (docs/specs.md "Cron jobs"): its YAML reader, its checks
// and the names of the labels that tie a run to its cron job. The scheduler makes and finds runs
// with the label names and RunName; the reader and the checks are in schedule_internal.h.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "spec/job_spec.h"

namespace paceline {

// The labels on a run of a cron job: the cron job's id, and its tick as Unix seconds.
inline constexpr absl::string_view kCronJobLabel = "paceline.cron/job";
inline constexpr absl::string_view kCronTickLabel = "paceline.cron/tick";
// Finished runs kept, each of keep_succeeded and keep_failed, at most.
inline constexpr uint32_t kMaxKeptRuns = 100;
// A cron job's name leaves room for its runs' "-YYYYMMDDhhmmss".
inline constexpr size_t kMaxCronJobNameLength = 100;

// The name of a cron job's run at `tick`: "<name>-YYYYMMDDhhmm" in the schedule's zone, with the
// seconds appended for a six-field schedule.
inline std::string RunName(absl::string_view job_name, absl::Time tick, const absl::TimeZone& zone,
                           bool with_seconds) {
  return absl::StrCat(job_name, "-",
                      absl::FormatTime(with_seconds ? "%Y%m%d%H%M%S" : "%Y%m%d%H%M", tick, zone));
}

}  // namespace paceline
