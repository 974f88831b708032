#include "cli/leader_hint.h"

#include "common/leader_hint.h"

namespace paceline::cli {

std::optional<std::string> LeaderOf(const grpc::ClientContext& context,
                                    const grpc::Status& status) {
  std::optional<absl::string_view> trailer;
  const auto& trailers = context.GetServerTrailingMetadata();
  if (auto it = trailers.find(kLeaderMetadataKey); it != trailers.end()) {
    trailer = absl::string_view(it->second.data(), it->second.size());
  }
  return RedirectedLeader(static_cast<absl::StatusCode>(status.error_code()), trailer,
                          status.error_message());
}

}  // namespace paceline::cli
