// CronExpression: a cron schedule (docs/specs.md "Cron jobs"), parsed once and asked for the
// next tick after a time in a time zone. Pure: no clock, no I/O (the caller loads the zone).
//
// The syntax is Vixie cron's five fields, `minute hour day-of-month month day-of-week`:
//   *          every value             1-5      a range             */15, 0-30/10, 5/20  steps
//   1,15,30    a list of any of these  JAN-DEC  months by name      SUN-SAT  weekdays by name
// Day-of-week 0 and 7 are both Sunday. Names are case-blind. When both day-of-month and
// day-of-week are restricted (neither starts with `*`), a day matches if EITHER does, as in
// Vixie cron; otherwise both must. Macros: @yearly (@annually), @monthly, @weekly, @daily
// (@midnight), @hourly. An extension: six fields, the first being seconds
// (`*/2 * * * * *`: every two seconds), for schedules finer than a minute.
//
// Time zones and daylight-saving time, in NextTick:
//   * a tick whose local time does not exist (skipped by a spring-forward, e.g. 02:30 in
//     Europe/Berlin on the last Sunday of March) runs at the first instant after the gap
//     (03:00 local); all the ticks of one gap run once there, together with a tick at that
//     instant itself;
//   * a tick whose local time happens twice (a fall-back repeats an hour) runs once, at its
//     first occurrence; the repeated hour's second pass has no ticks.
//
// Thread-safety: a const CronExpression may be read from any thread.

#pragma once

#include <bitset>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace paceline::cron {

// The longest expression accepted.
inline constexpr size_t kMaxExpressionLength = 256;

class CronExpression {
 public:
  // INVALID_ARGUMENT naming the field and what was expected, e.g. "minute: '61' is out of
  // range; expected 0-59", or for an expression that can never match ("day-of-month: 30 never
  // occurs in the months FEB").
  static absl::StatusOr<CronExpression> Parse(absl::string_view text);

  // The first tick strictly after `after`, in `zone` (see the DST rules above); nullopt only if
  // none falls within the next 28 years (not for an expression Parse accepted, in practice).
  std::optional<absl::Time> NextTick(absl::Time after, const absl::TimeZone& zone) const;

  // True if the expression has the sixth, seconds field.
  bool has_seconds() const { return has_seconds_; }
  // The text it was parsed from.
  const std::string& text() const { return text_; }

 private:
  CronExpression() = default;
  bool DayMatches(int year, int month, int day) const;

  std::string text_;
  bool has_seconds_ = false;
  std::bitset<60> seconds_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool days_star_ = false;
  bool weekdays_star_ = false;
};

// A time zone by its IANA name ("Europe/Berlin", "UTC"), read from the system's zone files;
// INVALID_ARGUMENT "unknown time zone '...'; expected an IANA name such as Europe/Berlin".
absl::StatusOr<absl::TimeZone> LoadZone(absl::string_view name);

}  // namespace paceline::cron
