#include "cli/format.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/units.h"

namespace paceline::cli {

std::string FormatUnixMillis(int64_t ms) {
  if (ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

std::string FormatResources(const v1::Resources& r) {
  std::vector<std::string> parts;
  if (r.cpu_milli() != 0) parts.push_back(absl::StrCat(FormatCpu(r.cpu_milli()), " cpu"));
  if (r.memory_bytes() != 0) {
    parts.push_back(absl::StrCat(FormatBytesApprox(r.memory_bytes()), " mem"));
  }
  if (r.disk_bytes() != 0)
    parts.push_back(absl::StrCat(FormatBytesApprox(r.disk_bytes()), " disk"));
  if (r.gpu_milli() != 0) parts.push_back(absl::StrCat(FormatGpu(r.gpu_milli()), " gpu"));
  return parts.empty() ? "0" : absl::StrJoin(parts, ", ");
}

std::string UpdateLine(const v1::UpdateInfo& u) {
  std::string line =
      absl::StrCat(u.id(), " ", v1::Update::State_Name(u.state()), u.paused() ? " (paused)" : "",
                   " v", u.from_version(), " -> v", u.to_version(), ": ", u.done(), "/", u.total(),
                   " done, ", u.in_flight(), " in flight, ", u.failed(), " failed (batch ",
                   u.batch_size(), ", max failures ", u.max_failures(), ")");
  if (!u.message().empty()) absl::StrAppend(&line, "; ", u.message());
  return line;
}

}  // namespace paceline::cli
