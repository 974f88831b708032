#include "common/units.h"

#include <array>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paceline {
namespace {

// A non-negative decimal number split into its digits: value = digits / 10^scale.
struct Decimal {
  __int128 digits = 0;
  int scale = 0;
};

// Parses "123", "0.5", ".5", "12." into a Decimal; rejects signs, exponents and garbage.
// At most 19 integer digits and 9 fraction digits, which keeps every later product in __int128.
absl::StatusOr<Decimal> ParseDecimal(absl::string_view text, absl::string_view what) {
  Decimal d;
  int int_digits = 0;
  bool seen_point = false;
  bool any_digit = false;
  for (char c : text) {
    if (c == '.') {
      if (seen_point) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' has two dots"));
      }
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is not a number"));
    }
    any_digit = true;
    if (seen_point) {
      if (++d.scale > 9) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": '", text, "' has more than 9 decimal places"));
      }
    } else if (++int_digits > 19) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is too large"));
    }
    d.digits = d.digits * 10 + (c - '0');
  }
  if (!any_digit) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is not a number"));
  }
  return d;
}

__int128 Pow10(int n) {
  __int128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

// value = decimal * factor / divisor, which must be a whole number that fits int64.
absl::StatusOr<int64_t> Scale(const Decimal& d, int64_t factor, absl::string_view text,
                              absl::string_view what, absl::string_view granule) {
  // 28 digits times a factor up to 2^60 can exceed __int128: refuse instead of overflowing.
  __int128 num = 0;
  if (__builtin_mul_overflow(d.digits, static_cast<__int128>(factor), &num)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is too large"));
  }
  __int128 den = Pow10(d.scale);
  if (num % den != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", text, "' is finer than the smallest unit (", granule, ")"));
  }
  __int128 v = num / den;
  if (v > static_cast<__int128>(INT64_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": '", text, "' is too large"));
  }
  return static_cast<int64_t>(v);
}

absl::string_view Trim(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

absl::Status NegativeError(absl::string_view what, absl::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": '", text, "' is negative; amounts must be >= 0"));
}

// Prints value / 10^3 with trailing zeros trimmed ("1.5", "2", "0.001").
std::string FormatMilli(int64_t v) {
  if (v == kUnlimited) return "unlimited";
  std::string sign = v < 0 ? "-" : "";
  uint64_t a = v < 0 ? -static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint64_t whole = a / 1000, frac = a % 1000;
  if (frac == 0) return absl::StrCat(sign, whole);
  std::string f = absl::StrFormat("%03d", frac);
  while (f.back() == '0') f.pop_back();
  return absl::StrCat(sign, whole, ".", f);
}

struct ByteUnit {
  absl::string_view suffix;
  int64_t factor;
};
constexpr int64_t kKi = 1024;
constexpr std::array<ByteUnit, 13> kByteUnits = {{
    {"Ei", kKi* kKi* kKi* kKi* kKi* kKi},
    {"Pi", kKi* kKi* kKi* kKi* kKi},
    {"Ti", kKi* kKi* kKi* kKi},
    {"Gi", kKi* kKi* kKi},
    {"Mi", kKi* kKi},
    {"Ki", kKi},
    {"E", 1000'000'000'000'000'000},
    {"P", 1000'000'000'000'000},
    {"T", 1000'000'000'000},
    {"G", 1000'000'000},
    {"M", 1000'000},
    {"k", 1000},
    {"K", 1000},
}};

}  // namespace

absl::StatusOr<int64_t> ParseCpu(absl::string_view raw) {
  constexpr absl::string_view kWhat = "cpu";
  absl::string_view text = Trim(raw);
  if (text.empty()) {
    return absl::InvalidArgumentError("cpu: empty; expected cores such as 0.5 or 2, or 500m");
  }
  if (text.front() == '-') return NegativeError(kWhat, text);
  int64_t factor = 1000;
  absl::string_view number = text;
  if (text.back() == 'm') {
    factor = 1;
    number.remove_suffix(1);
  }
  auto d = ParseDecimal(number, kWhat);
  if (!d.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        d.status().message(), "; expected cores such as 0.5 or 2, or millicores such as 500m"));
  }
  return Scale(*d, factor, text, kWhat, "1m = 0.001 core");
}

absl::StatusOr<int64_t> ParseBytes(absl::string_view raw) {
  constexpr absl::string_view kWhat = "size";
  absl::string_view text = Trim(raw);
  if (text.empty()) {
    return absl::InvalidArgumentError("size: empty; expected an amount such as 512Mi or 2Gi");
  }
  if (text.front() == '-') return NegativeError(kWhat, text);
  size_t unit_start = text.size();
  while (unit_start > 0 && absl::ascii_isalpha(text[unit_start - 1])) --unit_start;
  absl::string_view number = text.substr(0, unit_start);
  absl::string_view unit = text.substr(unit_start);
  int64_t factor = 1;
  if (!unit.empty()) {
    bool found = false;
    for (const ByteUnit& u : kByteUnits) {
      if (u.suffix == unit) {
        factor = u.factor;
        found = true;
        break;
      }
    }
    if (!found) {
      std::string hint;
      if (unit == "m") {
        hint = " ('m' means milli; did you mean Mi or M?)";
      } else if (unit.size() == 2 && (unit[1] == 'B' || unit[1] == 'b')) {
        hint = absl::StrCat(" (did you mean ", std::string(1, unit[0]), "i or ",
                            std::string(1, unit[0]), "?)");
      } else if (unit == "B" || unit == "b") {
        hint = " (plain bytes take no unit)";
      }
      return absl::InvalidArgumentError(
          absl::StrCat(kWhat, ": unknown unit '", unit, "' in '", text, "'", hint,
                       "; expected one of Ki Mi Gi Ti Pi Ei (binary) or k M G T P E (decimal)"));
    }
  }
  auto d = ParseDecimal(number, kWhat);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(d.status().message(), "; expected an amount such as 512Mi, 2Gi or 100M"));
  }
  return Scale(*d, factor, text, kWhat, "1 byte");
}

absl::StatusOr<int64_t> ParseGpu(absl::string_view raw) {
  constexpr absl::string_view kWhat = "gpu";
  absl::string_view text = Trim(raw);
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "gpu: empty; expected whole devices (1, 2) or a fraction (0.5)");
  }
  if (text.front() == '-') return NegativeError(kWhat, text);
  auto d = ParseDecimal(text, kWhat);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(d.status().message(),
                     "; expected whole devices such as 1 or 4, or a fraction such as 0.5"));
  }
  auto milli = Scale(*d, kMilliPerUnit, text, kWhat, "0.001 of a device");
  if (!milli.ok()) return milli.status();
  if (*milli > kMilliPerUnit && *milli % kMilliPerUnit != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kWhat, ": '", text,
        "' mixes whole devices and a fraction; ask for whole devices (1, 2, ...) or a fraction "
        "of one device (below 1)"));
  }
  return milli;
}

absl::StatusOr<int64_t> ParseQuantity(Dim dim, absl::string_view text) {
  switch (dim) {
    case Dim::kCpu:
      return ParseCpu(text);
    case Dim::kMemory:
    case Dim::kDisk:
      return ParseBytes(text);
    case Dim::kGpu:
      return ParseGpu(text);
  }
  return absl::InternalError("unknown dimension");
}

std::string FormatCpu(int64_t millicores) { return FormatMilli(millicores); }
std::string FormatGpu(int64_t milli_gpus) { return FormatMilli(milli_gpus); }

std::string FormatBytes(int64_t bytes) {
  if (bytes == kUnlimited) return "unlimited";
  if (bytes == 0) return "0";
  if (bytes == INT64_MIN) return absl::StrCat(bytes);
  std::string sign = bytes < 0 ? "-" : "";
  int64_t a = bytes < 0 ? -bytes : bytes;
  for (const ByteUnit& u : kByteUnits) {
    if (u.suffix == "K") continue;  // "k" is the canonical decimal kilo.
    if (a % u.factor == 0) return absl::StrCat(sign, a / u.factor, u.suffix);
  }
  return absl::StrCat(sign, a);
}

std::string FormatQuantity(Dim dim, int64_t value) {
  switch (dim) {
    case Dim::kCpu:
      return FormatCpu(value);
    case Dim::kMemory:
    case Dim::kDisk:
      return FormatBytes(value);
    case Dim::kGpu:
      return FormatGpu(value);
  }
  return absl::StrCat(value);
}

std::string FormatBytesApprox(int64_t bytes) {
  if (bytes == kUnlimited) return "unlimited";
  static constexpr std::array<absl::string_view, 7> kUnits = {"",   "Ki", "Mi", "Gi",
                                                              "Ti", "Pi", "Ei"};
  double v = static_cast<double>(bytes);
  size_t i = 0;
  while (std::fabs(v) >= 1024 && i + 1 < kUnits.size()) {
    v /= 1024;
    ++i;
  }
  if (i == 0) return absl::StrCat(bytes);
  if (std::fabs(v - std::round(v)) < 0.05) return absl::StrFormat("%.0f%s", v, kUnits[i]);
  return absl::StrFormat("%.1f%s", v, kUnits[i]);
}

absl::StatusOr<absl::Duration> ParseDurationStrict(absl::string_view raw) {
  absl::string_view text = Trim(raw);
  if (text == "0") return absl::ZeroDuration();
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "duration: empty; expected e.g. 30s, 5m, 2h, 1h30m, 500ms, 7d");
  }
  if (text.front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("duration: '", text, "' is negative; durations must be >= 0"));
  }
  bool all_digits = true;
  for (char c : text) all_digits &= (absl::ascii_isdigit(c) || c == '.');
  if (all_digits) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration: '", text, "' has no unit; write e.g. ", text, "s or ", text, "m"));
  }
  absl::Duration d;
  // Whole days ("30d"), which absl does not parse.
  if (int64_t days = 0; text.size() > 1 && text.back() == 'd' &&
                        absl::SimpleAtoi(text.substr(0, text.size() - 1), &days)) {
    if (days > 100000) {
      return absl::InvalidArgumentError(absl::StrCat("duration: '", text, "' is out of range"));
    }
    return absl::Hours(24 * days);
  }
  if (text == "inf" || text == "+inf" || !absl::ParseDuration(std::string(text), &d)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration: '", text, "' is not a duration; expected e.g. 30s, 5m, 2h, 1h30m, 500ms, 7d"));
  }
  if (d == absl::InfiniteDuration() || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("duration: '", text, "' is out of range"));
  }
  return d;
}

std::string FormatDurationShort(absl::Duration d) {
  if (d == absl::ZeroDuration()) return "0s";
  return absl::FormatDuration(d);
}

}  // namespace paceline
