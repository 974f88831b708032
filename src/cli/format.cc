#include "cli/format.h"

#include <google/protobuf/util/json_util.h>

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

void PrintProtoJson(const google::protobuf::Message& m, std::ostream& out) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  out << json;
  if (json.empty() || json.back() != '\n') out << "\n";
}

std::string UpdateLine(const v1::UpdateInfo& u) {
  std::string line = absl::StrCat(
      u.id(), " ", u.state(), u.paused() ? " (paused)" : "", " v", u.from_version(), " -> v",
      u.to_version(), ": ", u.done(), "/", u.total(), " done, ", u.in_flight(), " in flight, ",
      u.failed(), " failed (batch ", u.batch_size(), ", max failures ", u.max_failures(), ")");
  if (!u.message().empty()) absl::StrAppend(&line, "; ", u.message());
  return line;
}

}  // namespace paceline::cli
