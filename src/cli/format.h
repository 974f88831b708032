#pragma once
// Small formatting helpers for the client commands' tables (times, resources, update lines);
// the output formats themselves are cli/output.h.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paceline/v1/common.pb.h"
#include "paceline/v1/job.pb.h"

namespace paceline::cli {

// "2026-11-20 23:40:01" (UTC) for a Unix-millisecond time; "-" for 0.
std::string FormatUnixMillis(int64_t ms);
// A time flag's value in Unix milliseconds: a duration ("2h", "7d": that long ago) or an
// RFC 3339 time ("2026-11-20T10:00:00Z"); 0 for an empty value. INVALID_ARGUMENT names `flag`.
absl::StatusOr<int64_t> TimeFlagMillis(absl::string_view flag, const std::string& value);
// "1.5 cpu, 2Gi mem, 1Gi disk, 0.5 gpu" (zero dimensions left out; "0" when all zero).
std::string FormatResources(const v1::Resources& r);
// "2 ROLLING_FORWARD v3 -> v4: 4/10 done, 2 in flight, 0 failed (batch 2)" and its message.
std::string UpdateLine(const v1::UpdateInfo& u);
// A job's roles: "launcher 0, workers 1-4" (each role's name and its instances).
std::string RolesLine(const v1::GetJobResponse& job);
// A job's gang: "5 instances together, rendezvous mpi, restart gang (at most 2 gang restarts)".
std::string GangLine(const v1::JobGang& g);

}  // namespace paceline::cli
