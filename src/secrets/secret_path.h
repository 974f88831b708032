#pragma once
// Secret paths: a secret belongs to a pool and is named by the pool's path and its own name,
// "/ads/db-password" (the root pool's: "/db-password"). A job refers to a secret by name only;
// the name resolves in the job's pool first, then in each pool above it, so that a secret is
// usable by exactly the jobs of its pool's subtree (docs/security.md "Secrets").
//
// A name is 1..63 characters from [a-z0-9._-], starting with a letter or a digit.
//
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::secrets {

inline constexpr size_t kMaxValueBytes = 64 * 1024;

struct SecretPath {
  std::string pool;  // "/ads"
  std::string name;  // "db-password"
  std::string full;  // "/ads/db-password"
};

// OK, or INVALID_ARGUMENT saying what a name may be.
absl::Status CheckSecretName(absl::string_view name);
// "/ads/db-password" -> {"/ads", "db-password"}; INVALID_ARGUMENT naming what is wrong.
absl::StatusOr<SecretPath> ParseSecretPath(absl::string_view path);
// The path of secret `name` of `pool`.
std::string JoinSecretPath(absl::string_view pool, absl::string_view name);
// Where `name` is looked for by a job of `pool`, nearest first:
// ("/ads/x", "pw") -> {"/ads/x/pw", "/ads/pw", "/pw"}.
std::vector<std::string> Candidates(absl::string_view pool, absl::string_view name);

}  // namespace paceline::secrets
