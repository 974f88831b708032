#pragma once
// LayerStream: the uncompressed tar stream of an image layer file, hashed as it is read, so that
// a layer is unpacked and checked against its diff_id in one pass (layer_unpack.h). The
// compression is told by the file's first bytes: gzip (inflated with zlib, members one after
// another, each one's CRC and length checked, zero padding at the end allowed), zstd, xz, bzip2 or
// lz4 (by libarchive's filters), or none (the file is the tar stream).
//
// Thread-safety: one stream per thread.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "image/digest.h"

namespace paceline::image::internal {

class LayerStream {
 public:
  // NOT_FOUND / an errno status naming the path when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<LayerStream>> Open(const std::string& path);
  virtual ~LayerStream() = default;

  // Up to `n` bytes of the uncompressed stream into `buf`, 0 at its end. DATA_LOSS for
  // compressed data that is corrupt or cut short (or followed by anything but another gzip
  // member or zero padding), an errno status for I/O. After an error, the same error again.
  absl::StatusOr<size_t> Read(char* buf, size_t n);
  // Reads what is left, so that Digest covers the whole stream.
  absl::Status Drain();
  // "sha256:<hex>" of everything read; once, at the end.
  std::string Digest() { return hash_.Finish(); }
  // The error Read last returned (OK if none).
  const absl::Status& error() const { return error_; }
  // How the stream is compressed: "gzip", "zstd", ..., "none".
  virtual const char* compression() const = 0;

 protected:
  LayerStream() = default;
  virtual absl::StatusOr<size_t> ReadDecompressed(char* buf, size_t n) = 0;

 private:
  Sha256 hash_;
  absl::Status error_;
  bool done_ = false;
};

}  // namespace paceline::image::internal
