#pragma once
// How a master that does not lead names the one that does. A standby (or a master that stopped
// leading) refuses a call before doing anything, with UNAVAILABLE or FAILED_PRECONDITION and the
// leader's gRPC address in either of two places, looked up in this order:
//
//   trailing metadata   paceline-leader: HOST:PORT
//   the status message  "...; leader: HOST:PORT"   (the last "leader: " of the message, up to
//                                                   the end, a space, ';', ',' or ')')
//
// (masterd/leadership.cc writes the message form.) Such a refusal is a redirect: the call was
// not carried out, so the client may send it again to the leader, a write as well as a read
// (cli/rpc.h says when it does).
//
// Thread-safety: pure functions.

#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/string_view.h"

namespace paceline::cli {

// The marker before the leader's address in a status message.
inline constexpr absl::string_view kLeaderMarker = "leader: ";
// The trailing-metadata key that carries the leader's address.
inline constexpr char kLeaderMetadataKey[] = "paceline-leader";

// The HOST:PORT after the last kLeaderMarker of `message`; nullopt when there is none, or what
// follows is not HOST:PORT (a non-empty host, a colon, a decimal port).
std::optional<std::string> LeaderFromMessage(absl::string_view message);

// The leader a failed call was redirected to: the kLeaderMetadataKey trailer, else the message.
// Only UNAVAILABLE and FAILED_PRECONDITION redirect; nullopt for any other status.
std::optional<std::string> LeaderOf(const grpc::ClientContext& context, const grpc::Status& status);

}  // namespace paceline::cli
