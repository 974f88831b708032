#pragma once
// Random bytes from the system's cryptographic source (OpenSSL's RAND_bytes): the ids and
// secrets of tokens, the salts of their hashes, keys and nonces of the secrets keyring.
//
// A separate target, `paceline_random`, so that OpenSSL is on the link line only of what draws
// random bytes (access, secrets), never on `paceline_common`'s.
//
// Errors: UNAVAILABLE "the system's random source failed" when the source cannot deliver.
// Thread-safety: may be called from any thread.

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace paceline {

// `bytes` random bytes.
absl::StatusOr<std::string> RandomBytes(size_t bytes);
// `bytes` random bytes as 2 * `bytes` lowercase hex digits.
absl::StatusOr<std::string> RandomHex(size_t bytes);

}  // namespace paceline
