#pragma once
// SecretRecords: what the API needs of the master's secrets (masterd/secret_book.h) — sealed
// records by path, kept in memory and in the store, never a value but to seal it.
//
// Contract:
//   - Put seals `value` for `path` and makes it durable before returning it; ALREADY_EXISTS
//     when the path holds a secret and !replace, NOT_FOUND when its pool does not exist,
//     ABORTED when another change of the same path is under way, UNAVAILABLE when this master
//     does not serve.
//   - Delete: NOT_FOUND when absent.
//   - Resolve(pool, name): the path of the secret `name` nearest to `pool` (the pool itself,
//     then each pool above it), or nullopt.
//   - Rekey reads the key file again and reseals every secret not sealed with its first key;
//     returns that key's id and how many were resealed.
//
// Thread-safety: implementations are thread-safe.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "records/records.h"

namespace paceline::api {

class SecretRecords {
 public:
  virtual ~SecretRecords() = default;
  virtual absl::StatusOr<records::SecretRecord> Put(const std::string& path,
                                                    const std::string& value, const std::string& by,
                                                    bool replace) = 0;
  virtual absl::Status Delete(const std::string& path) = 0;
  // The secrets of `pool`, and of the pools below it when `recursive`, by path.
  virtual std::vector<records::SecretRecord> List(const std::string& pool,
                                                  bool recursive) const = 0;
  virtual std::optional<std::string> Resolve(const std::string& pool,
                                             const std::string& name) const = 0;
  virtual absl::StatusOr<std::pair<std::string, uint32_t>> Rekey() = 0;
};

}  // namespace paceline::api
