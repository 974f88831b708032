#include "image/layer_stream.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "image/rootfs_path.h"

namespace paceline::image::internal {
namespace {

constexpr size_t kBufferSize = 1 << 16;

absl::StatusOr<size_t> ReadFd(int fd, char* buf, size_t n, const std::string& path) {
  while (true) {
    ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return IoError(errno, absl::StrCat("read ", path));
  }
}

// No compression: the file is the tar stream.
class PlainStream : public LayerStream {
 public:
  PlainStream(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  const char* compression() const override { return "none"; }

 protected:
  absl::StatusOr<size_t> ReadDecompressed(char* buf, size_t n) override {
    return ReadFd(fd_.get(), buf, n, path_);
  }

 private:
  Fd fd_;
  std::string path_;
};

// gzip with zlib: one member after another until the end of the file (as gzip -d and Go's
// gzip.Reader), then possibly zero bytes (padding to a block); anything else is corrupt data.
class GzipStream : public LayerStream {
 public:
  GzipStream(Fd fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)), in_(kBufferSize) {
    std::memset(&z_, 0, sizeof(z_));
  }
  ~GzipStream() override {
    if (initialized_) inflateEnd(&z_);
  }
  const char* compression() const override { return "gzip"; }

 protected:
  absl::StatusOr<size_t> ReadDecompressed(char* buf, size_t n) override {
    if (!initialized_) {
      if (inflateInit2(&z_, 15 + 16) != Z_OK) return absl::ResourceExhaustedError("inflateInit");
      initialized_ = true;
    }
    while (true) {
      if (z_.avail_in == 0 && !eof_) {
        ASSIGN_OR_RETURN(size_t got, ReadFd(fd_.get(), in_.data(), in_.size(), path_));
        eof_ = got == 0;
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      if (!in_member_) {
        // Zero bytes after a member are padding to a whole block (as gzip -d allows them);
        // anything else must be another member.
        while (z_.avail_in > 0 && *z_.next_in == 0) {
          ++z_.next_in;
          --z_.avail_in;
          padding_ = true;
        }
        if (z_.avail_in == 0) {
          if (eof_) return 0;
          continue;
        }
        if (padding_) {
          return absl::DataLossError(absl::StrCat(path_, ": data after the gzip padding"));
        }
        if (inflateReset(&z_) != Z_OK) return absl::InternalError("inflateReset");
        in_member_ = true;
      }
      z_.next_out = reinterpret_cast<Bytef*>(buf);
      z_.avail_out = static_cast<uInt>(n);
      const int ret = inflate(&z_, Z_NO_FLUSH);
      const size_t produced = n - z_.avail_out;
      switch (ret) {
        case Z_STREAM_END:
          in_member_ = false;
          break;
        case Z_OK:
          break;
        case Z_BUF_ERROR:  // no progress possible: more input needed
          if (z_.avail_in == 0 && eof_) {
            return absl::DataLossError(absl::StrCat(path_, ": truncated gzip data"));
          }
          break;
        case Z_MEM_ERROR:
          return absl::ResourceExhaustedError(absl::StrCat(path_, ": inflate: out of memory"));
        default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
          return absl::DataLossError(absl::StrCat(path_, ": corrupt gzip data (",
                                                  z_.msg != nullptr ? z_.msg : "inflate", ")"));
      }
      if (produced > 0) return produced;
    }
  }

 private:
  Fd fd_;
  std::string path_;
  std::vector<char> in_;
  z_stream z_;
  bool initialized_ = false;
  bool in_member_ = true;
  bool padding_ = false;  // zero bytes seen after a member
  bool eof_ = false;
};

// zstd, xz, bzip2, lz4: libarchive's filters under its "raw" format (the whole decompressed
// stream as one entry).
class FilterStream : public LayerStream {
 public:
  FilterStream(Fd fd, std::string path, const char* name)
      : fd_(std::move(fd)), path_(std::move(path)), name_(name), a_(archive_read_new()) {}
  ~FilterStream() override { archive_read_free(a_); }
  const char* compression() const override { return name_; }

  absl::Status Start() {
    if (archive_read_support_filter_zstd(a_) != ARCHIVE_OK ||
        archive_read_support_filter_xz(a_) != ARCHIVE_OK ||
        archive_read_support_filter_bzip2(a_) != ARCHIVE_OK ||
        archive_read_support_filter_lz4(a_) != ARCHIVE_OK ||
        archive_read_support_format_raw(a_) != ARCHIVE_OK) {
      return absl::UnimplementedError(
          absl::StrCat("libarchive cannot decompress ", name_, ": ", archive_error_string(a_)));
    }
    if (archive_read_open_fd(a_, fd_.get(), kBufferSize) != ARCHIVE_OK) return Error();
    archive_entry* entry = nullptr;
    int r = archive_read_next_header(a_, &entry);
    if (r == ARCHIVE_EOF) {
      ended_ = true;
    } else if (r < ARCHIVE_WARN) {
      return Error();
    }
    return absl::OkStatus();
  }

 protected:
  absl::StatusOr<size_t> ReadDecompressed(char* buf, size_t n) override {
    if (ended_) return 0;
    la_ssize_t got = archive_read_data(a_, buf, n);
    if (got < 0) return Error();
    return static_cast<size_t>(got);
  }

 private:
  absl::Status Error() {
    const int err = archive_errno(a_);
    const char* what = archive_error_string(a_);
    std::string message = absl::StrCat(path_, ": ", name_, ": ", what != nullptr ? what : "");
    if (err == EIO || err == ENOMEM) return absl::ErrnoToStatus(err, message);
    return absl::DataLossError(message);
  }

  Fd fd_;
  std::string path_;
  const char* name_;
  archive* a_;
  bool ended_ = false;
};

// The compression its first bytes tell, or nullptr.
const char* Compression(const unsigned char* m, size_t n) {
  if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) return "gzip";
  if (n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) return "zstd";
  if (n >= 6 && std::memcmp(m,
                            "\xfd"
                            "7zXZ\0",
                            6) == 0)
    return "xz";
  if (n >= 3 && std::memcmp(m, "BZh", 3) == 0) return "bzip2";
  if (n >= 4 && m[0] == 0x04 && m[1] == 0x22 && m[2] == 0x4d && m[3] == 0x18) return "lz4";
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LayerStream>> LayerStream::Open(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return IoError(errno, absl::StrCat("open ", path));
  unsigned char magic[6];
  ssize_t n;
  do {
    n = ::pread(fd.get(), magic, sizeof(magic), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return IoError(errno, absl::StrCat("read ", path));
  const char* compression = Compression(magic, static_cast<size_t>(n));
  if (compression == nullptr) return std::make_unique<PlainStream>(std::move(fd), path);
  if (std::strcmp(compression, "gzip") == 0) {
    return std::make_unique<GzipStream>(std::move(fd), path);
  }
  auto stream = std::make_unique<FilterStream>(std::move(fd), path, compression);
  RETURN_IF_ERROR(stream->Start());
  return stream;
}

absl::StatusOr<size_t> LayerStream::Read(char* buf, size_t n) {
  if (!error_.ok()) return error_;
  if (done_ || n == 0) return 0;
  absl::StatusOr<size_t> got = ReadDecompressed(buf, n);
  if (!got.ok()) {
    error_ = got.status();
    return error_;
  }
  if (*got == 0) done_ = true;
  hash_.Update(buf, *got);
  return got;
}

absl::Status LayerStream::Drain() {
  std::vector<char> buf(kBufferSize);
  while (true) {
    ASSIGN_OR_RETURN(size_t got, Read(buf.data(), buf.size()));
    if (got == 0) return absl::OkStatus();
  }
}

}  // namespace paceline::image::internal
