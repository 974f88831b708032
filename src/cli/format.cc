#include "cli/format.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
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

absl::StatusOr<int64_t> TimeFlagMillis(absl::string_view flag, const std::string& value) {
  if (value.empty()) return 0;
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, value, &t, &err)) return absl::ToUnixMillis(t);
  absl::StatusOr<absl::Duration> ago = ParseDurationStrict(value);
  if (!ago.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", value, "' is neither a duration (2h, 7d) nor an RFC 3339 time"));
  }
  return absl::ToUnixMillis(absl::Now() - *ago);
}

std::string RolesLine(const v1::GetJobResponse& job) {
  std::vector<std::string> parts;
  for (const v1::JobRole& r : job.roles()) {
    uint32_t last = r.first_instance() + r.instances() - 1;
    parts.push_back(r.instances() == 1
                        ? absl::StrCat(r.name(), " ", r.first_instance())
                        : absl::StrCat(r.name(), " ", r.first_instance(), "-", last));
  }
  return absl::StrJoin(parts, ", ");
}

std::string GangLine(const v1::JobGang& g) {
  std::string line = absl::StrCat(g.size(), " instances together, rendezvous ", g.rendezvous(),
                                  ", restart ", g.restart());
  if (g.restart() == "gang")
    absl::StrAppend(&line, " (at most ", g.max_restarts(), " gang restarts)");
  return line;
}

}  // namespace paceline::cli
