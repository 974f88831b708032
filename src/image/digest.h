#pragma once
// SHA-256 content digests in the OCI form "sha256:<64 lower-case hex>", computed with OpenSSL
// as data streams through, so that a blob is verified while it is written and never read twice.
//
// Thread-safety: a Sha256 object is used by one thread; the functions are pure.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::image {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t n);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  // "sha256:<hex>" of everything given; the object is spent afterwards.
  std::string Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "sha256:<hex>" of `data`.
std::string Sha256Digest(absl::string_view data);
// "sha256:<hex>" of the file's content; NOT_FOUND / an errno status naming the path.
absl::StatusOr<std::string> Sha256File(const std::string& path);
// The hex part of a "sha256:<hex>" digest (for file names), or "" when it is not one.
std::string DigestHex(absl::string_view digest);

}  // namespace paceline::image
