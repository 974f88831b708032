#include "cron/cron_expression.h"

#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"

namespace paceline::cron {
namespace {

constexpr std::array<absl::string_view, 12> kMonthNames = {
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<absl::string_view, 7> kWeekdayNames = {"SUN", "MON", "TUE", "WED",
                                                            "THU", "FRI", "SAT"};
// The most days each month can have (February: 29, in leap years).
constexpr std::array<int, 13> kMaxDays = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

struct FieldInfo {
  absl::string_view name;
  int min;
  int max;                                   // day-of-week: 7, read as 0 (Sunday)
  const absl::string_view* names = nullptr;  // names[i] is the value min + i
  size_t name_count = 0;
};

constexpr FieldInfo kSecond{"second", 0, 59};
constexpr FieldInfo kMinute{"minute", 0, 59};
constexpr FieldInfo kHour{"hour", 0, 23};
constexpr FieldInfo kDay{"day-of-month", 1, 31};
constexpr FieldInfo kMonth{"month", 1, 12, kMonthNames.data(), kMonthNames.size()};
constexpr FieldInfo kWeekday{"day-of-week", 0, 7, kWeekdayNames.data(), kWeekdayNames.size()};

std::string Quoted(absl::string_view s) {
  return absl::StrCat("'", absl::CHexEscape(s.substr(0, 40)), s.size() > 40 ? "...'" : "'");
}

std::string Expected(const FieldInfo& f) {
  std::string out = absl::StrCat("expected ", f.min, "-", f.max);
  if (f.names != nullptr) {
    absl::StrAppend(&out, " or a name ", f.names[0], "-", f.names[f.name_count - 1]);
  }
  if (&f == &kWeekday) absl::StrAppend(&out, " (0 and 7 are Sunday)");
  return out;
}

absl::Status FieldError(const FieldInfo& f, absl::string_view item, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(f.name, ": ", Quoted(item), " ", what));
}

// One value: a number in range, or a name.
absl::StatusOr<int> ReadValue(const FieldInfo& f, absl::string_view item, absl::string_view v) {
  int n = 0;
  if (!v.empty() && absl::ascii_isdigit(static_cast<unsigned char>(v[0]))) {
    if (v.size() > 2 || !absl::SimpleAtoi(v, &n) || n < f.min || n > f.max) {
      return FieldError(f, item, absl::StrCat("is out of range; ", Expected(f)));
    }
    return n;
  }
  for (size_t i = 0; i < f.name_count; ++i) {
    if (absl::EqualsIgnoreCase(v, f.names[i])) return f.min + static_cast<int>(i);
  }
  return FieldError(f, item, absl::StrCat("is not a value; ", Expected(f)));
}

// One item of a list: *, a value, a range, each with an optional /step. Sets the values in
// `bits` (bit i = value i).
absl::Status ReadItem(const FieldInfo& f, absl::string_view item, std::bitset<60>& bits) {
  if (item.empty())
    return FieldError(f, item, absl::StrCat("is an empty list item; ", Expected(f)));
  absl::string_view range = item;
  int step = 1;
  bool has_step = false;
  if (size_t slash = item.find('/'); slash != absl::string_view::npos) {
    range = item.substr(0, slash);
    absl::string_view s = item.substr(slash + 1);
    int span = f.max - f.min + 1;
    if (s.empty() || s.size() > 2 || !absl::SimpleAtoi(s, &step) || step < 1 || step > span) {
      return FieldError(
          f, item,
          absl::StrCat("has a bad step; expected a step of 1-", span, " after '/', such as */5"));
    }
    has_step = true;
  }
  int lo = f.min;
  int hi = &f == &kWeekday ? 6 : f.max;
  if (range != "*") {
    size_t dash = range.find('-');
    absl::StatusOr<int> a = ReadValue(f, item, range.substr(0, dash));
    if (!a.ok()) return a.status();
    lo = *a;
    if (dash != absl::string_view::npos) {
      absl::StatusOr<int> b = ReadValue(f, item, range.substr(dash + 1));
      if (!b.ok()) return b.status();
      hi = *b;
      if (lo > hi) {
        return FieldError(f, item, "is a range that runs backwards; expected start <= end");
      }
    } else if (!has_step) {
      hi = lo;  // a single value; "5/15" means 5 to the end by 15
    }
  }
  for (int v = lo; v <= hi; v += step) bits.set(&f == &kWeekday && v == 7 ? 0 : v);
  return absl::OkStatus();
}

absl::StatusOr<std::bitset<60>> ReadField(const FieldInfo& f, absl::string_view text) {
  std::bitset<60> bits;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    if (absl::Status s = ReadItem(f, item, bits); !s.ok()) return s;
  }
  return bits;
}

template <size_t N>
std::bitset<N> Narrow(const std::bitset<60>& b) {
  std::bitset<N> out;
  for (size_t i = 0; i < N; ++i) out[i] = b[i];
  return out;
}

absl::StatusOr<std::string> ExpandMacro(absl::string_view text) {
  static constexpr std::array<std::pair<absl::string_view, absl::string_view>, 7> kMacros = {{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  for (const auto& [name, fields] : kMacros) {
    if (absl::EqualsIgnoreCase(text, name)) return std::string(fields);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Quoted(text),
                   " is not a schedule; expected @yearly, @annually, @monthly, @weekly, @daily, "
                   "@midnight or @hourly, or five fields such as '*/5 * * * *'"));
}

}  // namespace

absl::StatusOr<CronExpression> CronExpression::Parse(absl::string_view text) {
  if (text.size() > kMaxExpressionLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "is ", text.size(), " characters long; expected at most ", kMaxExpressionLength));
  }
  std::string expanded(absl::StripAsciiWhitespace(text));
  if (!expanded.empty() && expanded[0] == '@') {
    absl::StatusOr<std::string> m = ExpandMacro(expanded);
    if (!m.ok()) return m.status();
    expanded = *m;
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(expanded, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 5 && fields.size() != 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "has ", fields.size(),
        " fields; expected 5 (minute hour day-of-month month day-of-week, such as '*/5 * * * "
        "*'), 6 with seconds first, or a macro such as @daily"));
  }
  CronExpression e;
  e.text_ = std::string(text);
  e.has_seconds_ = fields.size() == 6;
  size_t i = 0;
  if (e.has_seconds_) {
    absl::StatusOr<std::bitset<60>> s = ReadField(kSecond, fields[i++]);
    if (!s.ok()) return s.status();
    e.seconds_ = *s;
  } else {
    e.seconds_.set(0);
  }
  const std::array<const FieldInfo*, 5> infos = {&kMinute, &kHour, &kDay, &kMonth, &kWeekday};
  std::array<std::bitset<60>, 5> bits;
  for (size_t k = 0; k < infos.size(); ++k) {
    absl::StatusOr<std::bitset<60>> f = ReadField(*infos[k], fields[i + k]);
    if (!f.ok()) return f.status();
    bits[k] = *f;
  }
  e.minutes_ = bits[0];
  e.hours_ = Narrow<24>(bits[1]);
  e.days_ = Narrow<32>(bits[2]);
  e.months_ = Narrow<13>(bits[3]);
  e.weekdays_ = Narrow<7>(bits[4]);
  e.days_star_ = fields[i + 2][0] == '*';
  e.weekdays_star_ = fields[i + 4][0] == '*';
  if (!e.days_star_ && e.weekdays_star_) {
    // The days alone decide: some chosen day must exist in some chosen month.
    bool occurs = false;
    std::vector<absl::string_view> months;
    for (int m = 1; m <= 12; ++m) {
      if (!e.months_[m]) continue;
      months.push_back(kMonthNames[m - 1]);
      for (int d = 1; d <= kMaxDays[m]; ++d) occurs |= e.days_[d];
    }
    if (!occurs) {
      return absl::InvalidArgumentError(
          absl::StrCat("day-of-month: ", Quoted(fields[i + 2]), " never occurs in the months ",
                       absl::StrJoin(months, ","), "; expected a day that one of them has"));
    }
  }
  return e;
}

bool CronExpression::DayMatches(int year, int month, int day) const {
  bool day_ok = days_[day];
  absl::Weekday w = absl::GetWeekday(absl::CivilDay(year, month, day));
  int wd = w == absl::Weekday::sunday ? 0 : static_cast<int>(w) + 1;  // monday = 0 in absl
  bool weekday_ok = weekdays_[wd];
  if (days_star_ || weekdays_star_) return day_ok && weekday_ok;
  return day_ok || weekday_ok;
}

std::optional<absl::Time> CronExpression::NextTick(absl::Time after,
                                                   const absl::TimeZone& zone) const {
  if (after == absl::InfiniteFuture()) return std::nullopt;
  if (after == absl::InfinitePast()) after = absl::UnixEpoch();
  absl::CivilSecond c = absl::ToCivilSecond(after, zone) + 1;
  const int64_t last_year = c.year() + 28;
  while (c.year() <= last_year) {
    if (!months_[c.month()]) {
      c = absl::CivilSecond(absl::CivilMonth(c) + 1);
    } else if (!DayMatches(static_cast<int>(c.year()), c.month(), c.day())) {
      c = absl::CivilSecond(absl::CivilDay(c) + 1);
    } else if (!hours_[c.hour()]) {
      c = absl::CivilSecond(absl::CivilHour(c) + 1);
    } else if (!minutes_[c.minute()]) {
      c = absl::CivilSecond(absl::CivilMinute(c) + 1);
    } else if (!seconds_[c.second()]) {
      c = has_seconds_ ? c + 1 : absl::CivilSecond(absl::CivilMinute(c) + 1);
    } else {
      absl::TimeZone::TimeInfo ti = zone.At(c);
      // Skipped (a spring-forward gap): the first instant after the gap. Repeated (a
      // fall-back): the first occurrence; `pre` is the earlier of the two.
      absl::Time t = ti.kind == absl::TimeZone::TimeInfo::SKIPPED ? ti.trans : ti.pre;
      if (t > after) return t;
      c = has_seconds_ ? c + 1 : absl::CivilSecond(absl::CivilMinute(c) + 1);
    }
  }
  return std::nullopt;
}

absl::StatusOr<absl::TimeZone> LoadZone(absl::string_view name) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown time zone ", Quoted(name),
                     "; expected an IANA name such as Europe/Berlin or UTC"));
  };
  // Names only, never a path: the zone files are read under the system's zoneinfo directory.
  if (name.empty() || name.size() > 64 || name[0] == '/' || name[0] == '.' ||
      absl::StrContains(name, "..") || name == "localtime") {
    return bad();
  }
  for (char ch : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(ch)) && ch != '/' && ch != '_' &&
        ch != '-' && ch != '+') {
      return bad();
    }
  }
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(std::string(name), &tz)) return bad();
  return tz;
}

}  // namespace paceline::cron
