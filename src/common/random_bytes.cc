#include "common/random_bytes.h"

#include <openssl/rand.h>

#include "absl/strings/escaping.h"

namespace paceline {

absl::StatusOr<std::string> RandomBytes(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    return absl::UnavailableError("the system's random source failed");
  }
  return raw;
}

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  absl::StatusOr<std::string> raw = RandomBytes(bytes);
  if (!raw.ok()) return raw.status();
  return absl::BytesToHexString(*raw);
}

}  // namespace paceline
