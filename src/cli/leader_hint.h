#pragma once
// The leader a failed gRPC call was redirected to (common/leader_hint.h says how a master that
// does not lead names the one that does).
//
// Thread-safety: pure functions.

#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

namespace paceline::cli {

// The kLeaderMetadataKey trailer, else the status message; nullopt unless the status is
// UNAVAILABLE or FAILED_PRECONDITION.
std::optional<std::string> LeaderOf(const grpc::ClientContext& context, const grpc::Status& status);

}  // namespace paceline::cli
