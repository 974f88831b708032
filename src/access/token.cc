#include "access/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hex.h"
#include "common/random_bytes.h"

namespace paceline::access {
namespace {

constexpr size_t kIdDigits = 16;
constexpr size_t kSecretDigits = 64;

}  // namespace

absl::StatusOr<TokenParts> ParseToken(absl::string_view token) {
  if (!absl::StartsWith(token, kTokenPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat("a token starts with ", kTokenPrefix));
  }
  token.remove_prefix(kTokenPrefix.size());
  size_t sep = token.find('_');
  if (sep == absl::string_view::npos) {
    return absl::InvalidArgumentError("a token is plt_<id>_<secret>: the second _ is missing");
  }
  absl::string_view id = token.substr(0, sep);
  absl::string_view secret = token.substr(sep + 1);
  if (id.size() != kIdDigits || !IsLowerHex(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a token's id is ", kIdDigits, " lowercase hex digits"));
  }
  if (secret.size() != kSecretDigits || !IsLowerHex(secret)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a token's secret is ", kSecretDigits, " lowercase hex digits"));
  }
  return TokenParts{std::string(id), std::string(secret)};
}

absl::StatusOr<absl::string_view> BearerToken(absl::string_view header) {
  constexpr absl::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError("the authorization header is not 'Bearer <token>'");
  }
  absl::string_view token = absl::StripAsciiWhitespace(header.substr(kScheme.size()));
  if (token.empty()) return absl::UnauthenticatedError("the authorization header has no token");
  return token;
}

absl::StatusOr<NewToken> GenerateToken() {
  absl::StatusOr<std::string> id = RandomHex(kIdDigits / 2);
  if (!id.ok()) return id.status();
  absl::StatusOr<std::string> secret = RandomHex(kSecretDigits / 2);
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::string> salt = RandomHex(16);
  if (!salt.ok()) return salt.status();
  NewToken out;
  out.token = absl::StrCat(kTokenPrefix, *id, "_", *secret);
  out.record.id = *id;
  out.record.salt = *salt;
  out.record.hash = HashSecret(*salt, *secret);
  return out;
}

std::string HashSecret(absl::string_view salt, absl::string_view secret) {
  std::string input = absl::StrCat(salt, secret);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(input.data(), input.size(), digest, &size, EVP_sha256(), nullptr);
  OPENSSL_cleanse(input.data(), input.size());
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), size));
}

bool SecretMatches(const records::TokenRecord& record, absl::string_view secret) {
  std::string got = HashSecret(record.salt, secret);
  return got.size() == record.hash.size() &&
         CRYPTO_memcmp(got.data(), record.hash.data(), got.size()) == 0;
}

absl::Status Usable(const records::TokenRecord& record, absl::Time now) {
  if (record.revoked_at <= now) {
    return absl::UnauthenticatedError(
        absl::StrCat("token ", record.id, " was revoked at ", absl::FormatTime(record.revoked_at)));
  }
  if (record.expires_at <= now) {
    return absl::UnauthenticatedError(
        absl::StrCat("token ", record.id, " expired at ", absl::FormatTime(record.expires_at)));
  }
  return absl::OkStatus();
}

}  // namespace paceline::access
