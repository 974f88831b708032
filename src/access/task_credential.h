#pragma once
// Task credentials (docs/security.md "Task credentials"): the bearer token the master gives a
// task with an identity (task.identity, or a controller), so that a driver manages its own job —
// reads it and its tasks, changes its instance count, kills and execs into its instances — and
// nothing else (the rules are in permissions.cc: the routes open to tasks, and only on their
// own job).
//
// A token names one run and when it expires, and is signed with a key the master holds:
//
//   pltk_<job>_<instance>_<run>_<expires, unix seconds>_<HMAC-SHA256(key, claim), 64 hex>
//
// so any master of the cluster checks it without a store lookup. Verify checks the shape, the
// signature (in constant time) and the expiry; whether the run still lives is the master's
// question (the core's view of the run), asked after Verify. The master sends a fresh token
// before the old one expires, for as long as the run lives.
//
// The key is derived from the master's bootstrap admin token (DeriveTaskKey): every master of a
// cluster shares that file, so they share the key; replacing the file invalidates every task
// credential, which the masters then renew with the new key.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "access/role.h"

namespace paceline::access {

inline constexpr absl::string_view kTaskTokenPrefix = "pltk_";

// Whom a task credential names: one run of one instance of a job.
struct TaskClaim {
  uint64_t job = 0;
  uint32_t instance = 0;
  uint32_t run = 0;
  absl::Time expires = absl::InfinitePast();
  friend bool operator==(const TaskClaim&, const TaskClaim&) = default;
};

// The key that signs task credentials, from the master's admin token: 32 bytes.
std::string DeriveTaskKey(absl::string_view admin_token);

// The token for `claim` (its expiry rounded down to a second), signed with `key`.
std::string MintTaskToken(absl::string_view key, const TaskClaim& claim);

// Whether `token` has the shape of a task credential (its prefix).
bool IsTaskToken(absl::string_view token);

// The claim of `token` when it is well formed, signed with `key` and not expired at `now`;
// UNAUTHENTICATED otherwise, saying which (never repeating the signature).
absl::StatusOr<TaskClaim> VerifyTaskToken(absl::string_view key, absl::string_view token,
                                          absl::Time now);

// The principal a verified task credential acts as: role task, user "task:JOB/INSTANCE/RUN"
// (the name the audit log records).
Principal TaskPrincipal(const TaskClaim& claim);

// An UpdateJob by `who`: a task's credential changes only its job's instance count, so a request
// with a new spec, or without an instance count, is PERMISSION_DENIED. OK for every other caller.
absl::Status TaskMayUpdate(const Principal& who, bool has_spec, bool has_instances);

}  // namespace paceline::access
