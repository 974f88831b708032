#pragma once
// API tokens: their format, how they are made and how a presented one is checked.
//
// A token is "plt_<id>_<secret>": `id` (16 lowercase hex digits) is public and names the token
// (token list, token revoke, the audit log); `secret` (64 lowercase hex digits, 256 random
// bits) is shown once, when the token is created, and never kept: the store holds a random
// salt and hex SHA-256(salt || secret). A secret of 256 random bits needs no slow hash: it
// cannot be guessed, only stolen, and a stolen store yields no usable token.
//
// The master's bootstrap tokens (its token files) are 64 hex digits without a prefix.
//
// Thread-safety: pure functions; GenerateToken reads the system's random source.

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "records/records.h"

namespace paceline::access {

inline constexpr absl::string_view kTokenPrefix = "plt_";

struct TokenParts {
  std::string id;
  std::string secret;
};

// Splits a presented token; INVALID_ARGUMENT saying what is wrong with its shape (never
// repeating the secret).
absl::StatusOr<TokenParts> ParseToken(absl::string_view token);

// The token in an `authorization` header value: "Bearer <token>" (the scheme in any case).
// UNAUTHENTICATED when the header is not of that form.
absl::StatusOr<absl::string_view> BearerToken(absl::string_view header);

// A new token and the record fields that check it (id, salt, hash); the caller fills the rest.
struct NewToken {
  std::string token;  // the whole token, to show once
  records::TokenRecord record;
};
absl::StatusOr<NewToken> GenerateToken();

// hex SHA-256 of (salt || secret).
std::string HashSecret(absl::string_view salt, absl::string_view secret);
// Whether `secret` is the record's, compared in constant time.
bool SecretMatches(const records::TokenRecord& record, absl::string_view secret);

// Whether the record may be used at `now`: OK, or UNAUTHENTICATED saying it was revoked or
// has expired (and when).
absl::Status Usable(const records::TokenRecord& record, absl::Time now);

}  // namespace paceline::access
