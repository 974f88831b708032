#pragma once
// When a certificate stops being valid, read from its PEM text: what the master exports on
// /metrics (paceline_tls_certificate_not_after_timestamp_seconds) so that an alert fires weeks
// before a certificate of the cluster expires (docs/operations.md "Monitoring").
//
// Thread-safety: pure functions.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::tls {

// The notAfter of the first certificate in `pem`. INVALID_ARGUMENT when `pem` holds no
// certificate or its notAfter cannot be read.
absl::StatusOr<absl::Time> CertificateNotAfter(const std::string& pem);

}  // namespace paceline::tls
