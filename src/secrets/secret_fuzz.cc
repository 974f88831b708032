// Fuzzes the parsers of secret paths and of the keyring file: any input gets a value or a
// clear error, never a crash; a path that parses joins back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "secrets/keyring.h"
#include "secrets/secret_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<paceline::secrets::SecretPath> p = paceline::secrets::ParseSecretPath(input);
  if (p.ok() && paceline::secrets::JoinSecretPath(p->pool, p->name) != input) std::abort();
  if (!p.ok() && p.status().message().empty()) std::abort();
  absl::StatusOr<paceline::secrets::Keyring> k = paceline::secrets::Keyring::Parse(input);
  if (k.ok()) {
    absl::StatusOr<paceline::secrets::Sealed> s = k->Seal("/pw", input);
    if (!s.ok() || *k->Open("/pw", *s) != input) std::abort();
  }
  return 0;
}
