#include "image/digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "spec/image_ref.h"

namespace paceline::image {

struct Sha256::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
}

Sha256::~Sha256() = default;

void Sha256::Update(const void* data, size_t n) { EVP_DigestUpdate(state_->ctx, data, n); }

std::string Sha256::Finish() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(state_->ctx, md, &len);
  return absl::StrCat("sha256:",
                      absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(md), len)));
}

std::string Sha256Digest(absl::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.Finish();
}

absl::StatusOr<std::string> Sha256File(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  Sha256 h;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return absl::ErrnoToStatus(err, absl::StrCat("read ", path));
    }
    if (n == 0) break;
    h.Update(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return h.Finish();
}

std::string DigestHex(absl::string_view digest) {
  return spec::IsSha256Digest(digest) ? std::string(digest.substr(7)) : std::string();
}

}  // namespace paceline::image
