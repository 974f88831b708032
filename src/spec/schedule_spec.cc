// A job's `schedule`: read from YAML, checked, and the names of its runs (schedule_spec.h).

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "common/units.h"
#include "cron/cron_expression.h"
#include "spec/job_yaml_internal.h"
#include "spec/schedule_internal.h"
#include "spec/schedule_spec.h"
#include "spec/spec_validation.h"

namespace paceline {

namespace yaml_internal {

namespace {
constexpr std::array<absl::string_view, 7> kScheduleKeys = {
    "cron",           "time_zone",   "concurrency", "starting_deadline",
    "keep_succeeded", "keep_failed", "suspend"};
constexpr std::array<absl::string_view, 3> kPolicies = {"allow", "forbid", "replace"};
}  // namespace

ScheduleSpec ReadSchedule(const Field& f, Diagnostics& diag) {
  ScheduleSpec s;
  MapReader m(f, kScheduleKeys,
              "expected a map such as {cron: \"*/5 * * * *\", time_zone: Europe/Berlin}", diag);
  ReadInto(m.Require("cron", "expected a cron expression such as \"*/5 * * * *\" or @daily"),
           s.cron, ReadString, diag);
  ReadInto(m.Get("time_zone"), s.time_zone, ReadString, diag);
  if (auto c = m.Get("concurrency")) {
    if (auto v = ReadEnum(*c, kPolicies, diag)) s.concurrency = static_cast<ConcurrencyPolicy>(*v);
  }
  if (auto d = m.Get("starting_deadline")) {
    if (auto v = ReadDuration(*d, diag)) s.starting_deadline = *v;
  }
  ReadCount(m.Get("keep_succeeded"), s.keep_succeeded, diag);
  ReadCount(m.Get("keep_failed"), s.keep_failed, diag);
  ReadInto(m.Get("suspend"), s.suspend, ReadBool, diag);
  return s;
}

}  // namespace yaml_internal

namespace validation_internal {

void CheckSchedule(ErrorSink& sink, const JobSpec& spec) {
  if (!spec.schedule) return;
  const ScheduleSpec& s = *spec.schedule;
  if (spec.type != JobType::kBatch) {
    sink.Add("schedule",
             absl::StrCat("is set on a ", JobTypeName(spec.type),
                          " job; only batch jobs run on a schedule: expected type: batch, or "
                          "remove schedule"),
             {"type"});
  }
  if (!spec.depends_on.empty()) {
    sink.Add("schedule",
             "is set with depends_on; a cron job's runs start at its ticks, not after other "
             "jobs: remove one of them",
             {"depends_on"});
  }
  if (spec.name.size() > kMaxCronJobNameLength) {
    sink.Add("name", absl::StrCat("is ", spec.name.size(),
                                  " characters long on a cron job; expected at most ",
                                  kMaxCronJobNameLength, " so that its runs' names fit"));
  }
  if (s.cron.empty()) {
    sink.Add("schedule.cron",
             "is required; expected a cron expression such as \"*/5 * * * *\" or @daily");
  } else if (absl::StatusOr<cron::CronExpression> e = cron::CronExpression::Parse(s.cron);
             !e.ok()) {
    sink.Add("schedule.cron", std::string(e.status().message()));
  }
  if (absl::StatusOr<absl::TimeZone> z = cron::LoadZone(s.time_zone); !z.ok()) {
    sink.Add("schedule.time_zone", std::string(z.status().message()));
  }
  if (s.starting_deadline && *s.starting_deadline < absl::Seconds(1)) {
    sink.Add("schedule.starting_deadline",
             absl::StrCat("is ", FormatDurationShort(*s.starting_deadline),
                          "; expected at least 1s, or leave it out for no deadline"));
  }
  if (s.keep_succeeded > kMaxKeptRuns) {
    sink.Add("schedule.keep_succeeded",
             absl::StrCat("is ", s.keep_succeeded, "; expected at most ", kMaxKeptRuns));
  }
  if (s.keep_failed > kMaxKeptRuns) {
    sink.Add("schedule.keep_failed",
             absl::StrCat("is ", s.keep_failed, "; expected at most ", kMaxKeptRuns));
  }
}

}  // namespace validation_internal
}  // namespace paceline
