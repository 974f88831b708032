#pragma once
// The master's side of joining hosts (docs/operations.md "Joining hosts"): the cluster's CA and
// the signing of a joining host's request with it (api::HostCertificates, for AccessServiceImpl),
// and the check that refuses an agent's revoked certificate (api::AccessOptions).
//
// A certificate issued at a join is recorded by the agent token made with it, named
// "cert:SERIAL" (api/access_service.h); revoking the certificate revokes that token, which is
// durable in the store like every token, so a revocation outlives a restart and reaches the
// standbys.
//
// Thread-safety: the functions returned are thread-safe (the book is).

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/access_service.h"
#include "masterd/access_book.h"
#include "masterd/master_tls.h"

namespace paceline::masterd {

// Empty (no CA) without TLS. Certificates it signs are valid `validity`.
absl::StatusOr<api::HostCertificates> HostCertificatesOf(const MasterTls& tls,
                                                         absl::Duration validity);

// PERMISSION_DENIED naming the serial when `cert_pem` was issued at a join and its token has
// been revoked since.
std::function<absl::Status(const std::string& cert_pem)> RevokedCertificateCheck(
    const AccessBook* book);

}  // namespace paceline::masterd
