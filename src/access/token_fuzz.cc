// libFuzzer target: what a client may send in place of a credential — the authorization
// header, the token in it — and what an admin may ask a token to grant. Checks that nothing
// crashes, that a parsed token has the documented shape, that a refusal never repeats the
// secret it was given (its messages are fixed), and that an accepted grant is one of the documented
// forms.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "access/grant.h"
#include "access/permissions.h"
#include "access/token.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline::access;
  const std::string input(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<absl::string_view> bearer = BearerToken(input);
  const absl::string_view token = bearer.ok() ? *bearer : absl::string_view(input);
  absl::StatusOr<TokenParts> parts = ParseToken(token);
  if (parts.ok()) {
    Check(parts->id.size() == 16 && parts->secret.size() == 64);
    Check(absl::StrContains(token, parts->id) && absl::StrContains(token, parts->secret));
  } else {
    // One of the fixed messages: never an echo of what was sent (it may be a secret).
    const absl::string_view m = parts.status().message();
    Check(m == "a token starts with plt_" ||
          m == "a token is plt_<id>_<secret>: the second _ is missing" ||
          m == "a token's id is 16 lowercase hex digits" ||
          m == "a token's secret is 64 lowercase hex digits");
  }

  // The input split into the fields of a grant: user, group, role, scope, name.
  std::vector<std::string> f = absl::StrSplit(input, '\n');
  f.resize(5);
  absl::StatusOr<paceline::records::TokenRecord> r = CheckGrant({f[0], f[1], f[2], f[3], f[4]});
  if (r.ok()) {
    Check(RoleFromName(r->role).has_value());
    if (r->role == "agent") {
      Check(r->scope == r->user);
    } else {
      Check(IsValidName(r->user) && absl::StartsWith(r->scope, "/"));
      Check(InScope(r->scope, r->scope));
    }
  }
  return 0;
}
