#pragma once
// Human units for resource amounts and durations: parsing and printing.
//
// Accepted forms (the parse functions reject everything else with an error that says what was
// expected and why the input is wrong):
//   cpu      "2", "0.5", "1.25" cores, or "500m" millicores; at most 1m precision.
//   memory,  "1024" bytes; decimal units k/K M G T P E (powers of 1000) and binary units
//   disk     Ki Mi Gi Ti Pi Ei (powers of 1024), e.g. "512Mi", "2Gi", "1G", "100M", "1.5Gi".
//            The amount must come out as a whole number of bytes.
//   gpu      a whole number of devices ("1", "4") or a fraction of one device below 1 ("0.5",
//            "0.25"); at most 0.001 precision. "1.5" is refused: a task gets either whole
//            devices or a share of one device.
//   duration "30s", "2h", "1h30m", "500ms", "0"; a unit is required for non-zero values;
//            negative and infinite durations are refused.
// The format functions print the shortest exact form, so Parse(Format(x)) == x for every valid x.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/resources.h"

namespace paceline {

absl::StatusOr<int64_t> ParseCpu(absl::string_view text);    // -> millicores
absl::StatusOr<int64_t> ParseBytes(absl::string_view text);  // -> bytes
absl::StatusOr<int64_t> ParseGpu(absl::string_view text);    // -> milli-GPUs
// Dispatches on the dimension.
absl::StatusOr<int64_t> ParseQuantity(Dim dim, absl::string_view text);

std::string FormatCpu(int64_t millicores);  // 1500 -> "1.5", 2000 -> "2", 1 -> "0.001"
std::string FormatBytes(int64_t bytes);     // 2147483648 -> "2Gi", 1000000 -> "1M", 7 -> "7"
std::string FormatGpu(int64_t milli_gpus);  // 500 -> "0.5", 2000 -> "2"
// Dispatches on the dimension; kUnlimited prints as "unlimited".
std::string FormatQuantity(Dim dim, int64_t value);

// A rounded, human-friendly rendering for tables ("1.5Gi", "931.3Mi"); not exact, not for specs.
std::string FormatBytesApprox(int64_t bytes);

absl::StatusOr<absl::Duration> ParseDurationStrict(absl::string_view text);
std::string FormatDurationShort(absl::Duration d);  // "1h30m", "500ms", "0s"

}  // namespace paceline
