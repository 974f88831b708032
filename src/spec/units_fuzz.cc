// libFuzzer target for the unit parsers of common/units.h (it lives here because the fuzz
// build compiles src/common and src/spec only, and src/spec owns the spec fuzzers).
// The first byte picks the parser; the rest is the text. Invariants: no crash; accepted
// amounts are >= 0; Parse(Format(x)) == x for every accepted x (except kUnlimited, which
// prints as "unlimited"); GPU amounts are whole devices or a fraction of one device.

#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "common/units.h"

namespace {

using paceline::kUnlimited;

void CheckAmount(absl::StatusOr<int64_t> (*parse)(absl::string_view),
                 std::string (*format)(int64_t), absl::string_view text) {
  absl::StatusOr<int64_t> v = parse(text);
  if (!v.ok()) {
    PL_CHECK(v.status().code() == absl::StatusCode::kInvalidArgument) << v.status();
    return;
  }
  PL_CHECK(*v >= 0) << "'" << text << "' -> " << *v;
  if (*v == kUnlimited) return;
  std::string printed = format(*v);
  absl::StatusOr<int64_t> back = parse(printed);
  PL_CHECK(back.ok()) << "'" << text << "' -> " << *v << " -> '" << printed
                      << "': " << back.status();
  PL_CHECK(*back == *v) << "'" << text << "' -> " << *v << " -> '" << printed << "' -> " << *back;
  (void)paceline::FormatBytesApprox(*v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckAmount(paceline::ParseCpu, paceline::FormatCpu, text);
      break;
    case 1:
      CheckAmount(paceline::ParseBytes, paceline::FormatBytes, text);
      break;
    case 2: {
      CheckAmount(paceline::ParseGpu, paceline::FormatGpu, text);
      absl::StatusOr<int64_t> g = paceline::ParseGpu(text);
      if (g.ok()) {
        PL_CHECK(*g <= 1000 || *g % 1000 == 0) << "gpu '" << text << "' -> " << *g;
      }
      break;
    }
    default: {
      absl::StatusOr<absl::Duration> d = paceline::ParseDurationStrict(text);
      if (!d.ok()) break;
      PL_CHECK(*d >= absl::ZeroDuration() && *d != absl::InfiniteDuration()) << text;
      std::string printed = paceline::FormatDurationShort(*d);
      absl::StatusOr<absl::Duration> back = paceline::ParseDurationStrict(printed);
      PL_CHECK(back.ok()) << "'" << text << "' -> '" << printed << "': " << back.status();
      PL_CHECK(*back == *d) << "'" << text << "' -> '" << printed << "'";
      break;
    }
  }
  return 0;
}
