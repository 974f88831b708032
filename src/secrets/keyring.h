#pragma once
// Keyring: the keys that seal the cluster's secrets at rest (AES-256-GCM). The keys live in a
// file outside the store (DATA_DIR/secrets.key by default, mode 0600), so that a copy of the
// store, a backup or a database dump holds no secret in clear (docs/security.md "Secrets").
//
// The file has one key per line, "<id> <64 hex digits>"; lines starting with '#' and blank
// lines are ignored. The first key seals new values; every key opens what it sealed, so a key
// is rotated by putting a new one first (NewKeyFile), resealing (`paceline secret rekey`) and
// then deleting the old line.
//
// A sealed value is hex(nonce || ciphertext || tag), with a fresh 96-bit nonce per seal and the
// secret's path as additional data: a value moved to another path, or altered, does not open.
//
// Thread-safety: a Keyring is immutable after loading; Seal and Open may run concurrently.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::secrets {

struct Sealed {
  std::string key_id;
  std::string sealed;  // hex
};

class Keyring {
 public:
  // Reads the keys of `text` (the file's contents); INVALID_ARGUMENT naming the line.
  static absl::StatusOr<Keyring> Parse(absl::string_view text);
  // Reads `path`; when it does not exist, creates it (0600) with one new key. Refuses a file
  // that others may read, or a keyring without keys.
  static absl::StatusOr<Keyring> LoadOrCreate(const std::string& path);
  // A new key's line, "<id> <hex>\n".
  static absl::StatusOr<std::string> NewKeyLine();
  // Puts a new key first in the file at `path` (created when missing), keeping the others;
  // returns the new key's id. The running master uses it from its next `secret rekey`.
  static absl::StatusOr<std::string> AddKeyToFile(const std::string& path);

  absl::StatusOr<Sealed> Seal(absl::string_view path, absl::string_view value) const;
  // The value of a secret sealed at `path`; FAILED_PRECONDITION when the key is not in the
  // keyring, DATA_LOSS when the value does not open (altered, or sealed for another path).
  absl::StatusOr<std::string> Open(absl::string_view path, const Sealed& sealed) const;

  const std::string& current_id() const { return current_; }
  bool Has(const std::string& key_id) const { return keys_.contains(key_id); }

 private:
  std::string current_;
  std::map<std::string, std::string> keys_;  // id -> 32 raw bytes
};

}  // namespace paceline::secrets
