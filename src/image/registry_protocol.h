#pragma once
// The pieces of the OCI distribution protocol that RegistryClient reads from a registry's
// answers, as pure functions so that they are tested without a network: the WWW-Authenticate
// challenge, the JSON error body, the token endpoint's answer, and which canonical code an
// HTTP status becomes.
//
// Thread-safety: pure functions over values.

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::image {

// A challenge of a WWW-Authenticate header (RFC 7235), e.g.
//   Bearer realm="https://auth.example.com/token",service="registry",scope="repository:a/b:pull"
struct AuthChallenge {
  std::string scheme;                         // lower-case: "bearer", "basic"
  std::map<std::string, std::string> params;  // keys lower-case, values unquoted
};

// The first challenge of the header, or nullopt when it has none.
std::optional<AuthChallenge> ParseAuthChallenge(absl::string_view header);

// The registry's error body {"errors":[{"code":"MANIFEST_UNKNOWN","message":"..."}]} as
// "MANIFEST_UNKNOWN: manifest unknown" (several joined by "; "); for any other body, its first
// 200 printable characters; "" for an empty body.
std::string DescribeErrorBody(absl::string_view body);

// The bearer token from a token endpoint's JSON answer ("token", or "access_token");
// PERMISSION_DENIED when there is none.
absl::StatusOr<std::string> ParseTokenResponse(absl::string_view body);

// The canonical code of a failed HTTP answer (not 2xx): 401/403 PERMISSION_DENIED, 404
// NOT_FOUND, 408/429/5xx UNAVAILABLE, 400 INVALID_ARGUMENT, any other FAILED_PRECONDITION.
absl::StatusCode CodeForHttpStatus(long http_status);

// The media type of a Content-Type header: parameters dropped, lower-case, trimmed.
std::string MediaTypeOf(absl::string_view content_type);

}  // namespace paceline::image
