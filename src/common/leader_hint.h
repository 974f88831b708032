#pragma once
// How a master that does not lead names the one that does. A standby (or a master that stopped
// leading) refuses a call before doing anything, with UNAVAILABLE or FAILED_PRECONDITION and the
// leader's gRPC address in either of two places, looked up in this order:
//
//   trailing metadata   paceline-leader: HOST:PORT
//   the status message  "...; leader: HOST:PORT"   (the last "leader: " of the message, up to
//                                                   the end, a space, ';', ',' or ')')
//
// masterd/leadership.cc writes the message form; the CLI (cli/rpc.h) and the agent
// (agentd/agent_daemon.h) follow it. Such a refusal is a redirect: the call was not carried out,
// so a client may send it again to the leader, a write as well as a read.
//
// Thread-safety: pure functions.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline {

// The marker before the leader's address in a status message.
inline constexpr absl::string_view kLeaderMarker = "leader: ";
// The trailing-metadata key that carries the leader's address.
inline constexpr char kLeaderMetadataKey[] = "paceline-leader";

// The HOST:PORT after the last kLeaderMarker of `message`; nullopt when there is none, or what
// follows is not HOST:PORT (a non-empty host, a colon, a decimal port).
std::optional<std::string> LeaderFromMessage(absl::string_view message);

// The leader a refusal redirects to: `trailer` (the kLeaderMetadataKey value, when the call had
// one and it is HOST:PORT), else the message. Only UNAVAILABLE and FAILED_PRECONDITION redirect;
// nullopt for any other code. (absl and gRPC status codes have the same numbers.)
std::optional<std::string> RedirectedLeader(absl::StatusCode code,
                                            std::optional<absl::string_view> trailer,
                                            absl::string_view message);

}  // namespace paceline
