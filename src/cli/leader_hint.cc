#include "cli/leader_hint.h"

#include "absl/strings/ascii.h"

namespace paceline::cli {
namespace {

bool IsHostPort(absl::string_view addr) {
  size_t colon = addr.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == addr.size()) return false;
  for (char c : addr.substr(colon + 1)) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> LeaderFromMessage(absl::string_view message) {
  size_t at = message.rfind(kLeaderMarker);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = message.substr(at + kLeaderMarker.size());
  size_t end = rest.find_first_of(" ;,)");
  absl::string_view addr = rest.substr(0, end);
  if (!IsHostPort(addr)) return std::nullopt;
  return std::string(addr);
}

std::optional<std::string> LeaderOf(const grpc::ClientContext& context,
                                    const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
    return std::nullopt;
  }
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(kLeaderMetadataKey);
  if (it != trailers.end()) {
    absl::string_view addr(it->second.data(), it->second.size());
    addr = absl::StripAsciiWhitespace(addr);
    if (IsHostPort(addr)) return std::string(addr);
  }
  return LeaderFromMessage(status.error_message());
}

}  // namespace paceline::cli
