#include "scheduler/cron_policy.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"

namespace paceline::scheduler {
namespace {

// Ticks walked forward from the start of a window before giving up (never reached by a window
// that holds a tick: each window is tried only when the smaller one held none).
constexpr int kMaxSteps = 100'000;

}  // namespace

std::optional<absl::Time> LatestTick(const cron::CronExpression& e, const absl::TimeZone& zone,
                                     absl::Time after, absl::Time now) {
  if (now <= after) return std::nullopt;
  std::optional<absl::Time> first = e.NextTick(after, zone);
  if (!first || *first > now) return std::nullopt;
  // Start from a window just before `now`, widened until it holds a tick, so that a long outage
  // does not walk every tick it missed.
  static constexpr std::array<absl::Duration, 6> kWindows = {
      absl::Minutes(1),     absl::Hours(1),        absl::Hours(24),
      absl::Hours(24 * 32), absl::Hours(24 * 367), absl::InfiniteDuration()};
  for (absl::Duration w : kWindows) {
    absl::Time start = w == absl::InfiniteDuration() ? after : std::max(after, now - w);
    std::optional<absl::Time> t = start == after ? first : e.NextTick(start, zone);
    if (!t || *t > now) continue;
    for (int i = 0; i < kMaxSteps; ++i) {
      std::optional<absl::Time> n = e.NextTick(*t, zone);
      if (!n || *n > now) return t;
      t = n;
    }
    return t;
  }
  return first;
}

CronDecision DecideCron(const ScheduleSpec& s, const cron::CronExpression& e,
                        const absl::TimeZone& zone, absl::Time handled,
                        absl::Span<const CronRun> runs, absl::Time now) {
  CronDecision d;
  d.handled = handled;
  std::vector<const CronRun*> live;
  for (const CronRun& r : runs) {
    if (r.phase == CronRun::Phase::kLive) live.push_back(&r);
  }
  if (std::optional<absl::Time> due = LatestTick(e, zone, handled, now)) {
    d.handled = *due;
    if (s.suspend) {
      d.skipped = *due;
      d.why_skipped = "the cron job is suspended";
    } else if (s.starting_deadline && now - *due > *s.starting_deadline) {
      d.skipped = *due;
      d.why_skipped = absl::StrCat("its start was ", FormatDurationShort(now - *due),
                                   " late, past the starting deadline of ",
                                   FormatDurationShort(*s.starting_deadline));
    } else if (!live.empty() && s.concurrency == ConcurrencyPolicy::kForbid) {
      d.skipped = *due;
      d.why_skipped =
          absl::StrCat("run ", live.front()->id.value(), " is still live (concurrency: forbid)");
    } else {
      if (s.concurrency == ConcurrencyPolicy::kReplace) {
        for (const CronRun* r : live) d.kill.push_back(r->id);
      }
      d.create = *due;
    }
  }
  // Keep limits: newest first; the newest run overall is kept whatever its outcome.
  std::vector<const CronRun*> finished;
  const CronRun* newest = nullptr;
  for (const CronRun& r : runs) {
    if (newest == nullptr || r.tick > newest->tick ||
        (r.tick == newest->tick && r.id > newest->id)) {
      newest = &r;
    }
    if (r.phase != CronRun::Phase::kLive) finished.push_back(&r);
  }
  std::sort(finished.begin(), finished.end(), [](const CronRun* a, const CronRun* b) {
    return a->tick != b->tick ? a->tick > b->tick : a->id > b->id;
  });
  uint32_t succeeded = 0;
  uint32_t failed = 0;
  for (const CronRun* r : finished) {
    uint32_t& count = r->phase == CronRun::Phase::kSucceeded ? succeeded : failed;
    uint32_t keep = r->phase == CronRun::Phase::kSucceeded ? s.keep_succeeded : s.keep_failed;
    if (++count > keep && r != newest) d.purge.push_back(r->id);
  }
  d.next_tick = e.NextTick(d.handled, zone);
  return d;
}

}  // namespace paceline::scheduler
