#include "common/leader_hint.h"

#include "absl/strings/ascii.h"

namespace paceline {
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

std::optional<std::string> RedirectedLeader(absl::StatusCode code,
                                            std::optional<absl::string_view> trailer,
                                            absl::string_view message) {
  if (code != absl::StatusCode::kUnavailable && code != absl::StatusCode::kFailedPrecondition) {
    return std::nullopt;
  }
  if (trailer) {
    absl::string_view addr = absl::StripAsciiWhitespace(*trailer);
    if (IsHostPort(addr)) return std::string(addr);
  }
  return LeaderFromMessage(message);
}

}  // namespace paceline
