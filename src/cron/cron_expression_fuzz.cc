// libFuzzer target: CronExpression::Parse on arbitrary bytes, then NextTick. Invariants: no
// crash; an error is INVALID_ARGUMENT; for an accepted expression, each tick is strictly after
// the time asked for, on a whole second, and asking again from a tick gives a later one, in UTC
// and in a zone with daylight-saving time.

#include <cstddef>
#include <cstdint>

#include "absl/time/civil_time.h"
#include "common/check.h"
#include "cron/cron_expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<paceline::cron::CronExpression> e = paceline::cron::CronExpression::Parse(text);
  if (!e.ok()) {
    PL_CHECK(e.status().code() == absl::StatusCode::kInvalidArgument) << e.status();
    return 0;
  }
  static const absl::TimeZone kBerlin = [] {
    absl::TimeZone z;
    if (!absl::LoadTimeZone("Europe/Berlin", &z)) z = absl::UTCTimeZone();
    return z;
  }();
  // A start that depends on the input: somewhere in 2026, across both DST changes.
  absl::Time start = absl::FromCivil(absl::CivilSecond(2026, 1, 1), absl::UTCTimeZone()) +
                     absl::Seconds(static_cast<int64_t>(size) * 86'413 % (366 * 86'400));
  for (const absl::TimeZone& zone : {absl::UTCTimeZone(), kBerlin}) {
    absl::Time t = start;
    for (int i = 0; i < 4; ++i) {
      std::optional<absl::Time> next = e->NextTick(t, zone);
      if (!next) break;
      PL_CHECK(*next > t) << text;
      PL_CHECK(absl::ToUnixNanos(*next) % 1'000'000'000 == 0) << text;
      t = *next;
    }
  }
  return 0;
}
