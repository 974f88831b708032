#include "secrets/keyring.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/atomic_file.h"
#include "common/hex.h"
#include "common/random_bytes.h"

namespace paceline::secrets {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kIdBytes = 4;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

unsigned char* U(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }
const unsigned char* U(absl::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

absl::Status FileError(absl::string_view what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("secrets key file ", path, ": ", what, ": ", std::strerror(errno)));
}

// Writes `path` with `text`, 0600, through a temporary file so that no reader sees half a key:
// renamed over it when `replace`, otherwise linked into place only if it does not exist.
absl::Status WriteKeyFile(const std::string& path, const std::string& text, bool replace) {
  return WriteFileAtomically(
      path, text,
      {.mode = 0600,
       .temp_suffix = absl::StrCat(".tmp.", ::getpid()),
       .sync = AtomicWriteOptions::Sync::kFull,
       .dir_sync = AtomicWriteOptions::DirSync::kNone,
       .replace = replace},
      [&](int err, absl::string_view what) {
        return absl::FailedPreconditionError(absl::StrCat(
            "secrets key file ", path, ": cannot write (", what, "): ", std::strerror(err)));
      });
}

absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return FileError("cannot read", path);
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("secrets key file ", path, " may be read by others (mode ",
                     absl::StrFormat("%04o", st.st_mode & 07777), "); run: chmod 600 ", path));
  }
  std::ifstream in(path);
  if (!in) return FileError("cannot read", path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<Keyring> Keyring::Parse(absl::string_view text) {
  Keyring k;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.size() != 2 || parts[0].size() != 2 * kIdBytes || !IsLowerHex(parts[0]) ||
        parts[1].size() != 2 * kKeyBytes || !IsLowerHex(parts[1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected \"<id: ", 2 * kIdBytes,
                       " hex digits> <key: ", 2 * kKeyBytes, " hex digits>\""));
    }
    std::string id(parts[0]);
    if (k.keys_.contains(id)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": key ", id, " again"));
    }
    if (k.current_.empty()) k.current_ = id;
    k.keys_[id] = absl::HexStringToBytes(parts[1]);
  }
  if (k.keys_.empty()) return absl::InvalidArgumentError("no key; expected \"<id> <key>\" lines");
  return k;
}

absl::StatusOr<std::string> Keyring::NewKeyLine() {
  absl::StatusOr<std::string> id = RandomBytes(kIdBytes);
  if (!id.ok()) return id.status();
  absl::StatusOr<std::string> key = RandomBytes(kKeyBytes);
  if (!key.ok()) return key.status();
  return absl::StrCat(absl::BytesToHexString(*id), " ", absl::BytesToHexString(*key), "\n");
}

absl::StatusOr<Keyring> Keyring::LoadOrCreate(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return FileError("cannot read", path);
    absl::StatusOr<std::string> line = NewKeyLine();
    if (!line.ok()) return line.status();
    std::string text = absl::StrCat(
        "# Paceline's secrets keyring: the first key seals new values, every key opens its own.\n"
        "# Keep it outside the store and give every master the same file (docs/security.md).\n",
        *line);
    if (absl::Status s = WriteKeyFile(path, text, false); !s.ok()) return s;
  }
  absl::StatusOr<std::string> text = ReadKeyFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<Keyring> k = Parse(*text);
  if (!k.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secrets key file ", path, ": ", k.status().message()));
  }
  return k;
}

absl::StatusOr<std::string> Keyring::AddKeyToFile(const std::string& path) {
  std::string old;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    absl::StatusOr<std::string> text = ReadKeyFile(path);
    if (!text.ok()) return text.status();
    old = *std::move(text);
  }
  absl::StatusOr<std::string> line = NewKeyLine();
  if (!line.ok()) return line.status();
  std::string text = absl::StrCat(*line, old);
  if (absl::StatusOr<Keyring> k = Parse(text); !k.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secrets key file ", path, ": ", k.status().message()));
  }
  if (absl::Status s = WriteKeyFile(path, text, true); !s.ok()) return s;
  return line->substr(0, 2 * kIdBytes);
}

absl::StatusOr<Sealed> Keyring::Seal(absl::string_view path, absl::string_view value) const {
  const std::string& key = keys_.at(current_);
  absl::StatusOr<std::string> nonce = RandomBytes(kNonceBytes);
  if (!nonce.ok()) return nonce.status();
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out = *nonce;
  out.resize(kNonceBytes + value.size() + kTagBytes);
  int len = 0;
  int total = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) &&
            EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, U(key), U(*nonce)) &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &len, U(path), static_cast<int>(path.size())) &&
            EVP_EncryptUpdate(ctx.get(), U(out) + kNonceBytes, &len, U(value),
                              static_cast<int>(value.size()));
  total = len;
  ok = ok && EVP_EncryptFinal_ex(ctx.get(), U(out) + kNonceBytes + total, &len);
  total += len;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                                 U(out) + kNonceBytes + total);
  if (!ok) return absl::InternalError("AES-256-GCM failed to seal a secret");
  return Sealed{current_, absl::BytesToHexString(out)};
}

absl::StatusOr<std::string> Keyring::Open(absl::string_view path, const Sealed& sealed) const {
  auto key = keys_.find(sealed.key_id);
  if (key == keys_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("secret ", path, " was sealed with key ", sealed.key_id,
                     ", which is not in the master's secrets key file"));
  }
  if (sealed.sealed.size() % 2 != 0 || !IsLowerHex(sealed.sealed) ||
      sealed.sealed.size() < 2 * (kNonceBytes + kTagBytes)) {
    return absl::DataLossError(absl::StrCat("secret ", path, " is not a sealed value"));
  }
  std::string raw = absl::HexStringToBytes(sealed.sealed);
  absl::string_view nonce(raw.data(), kNonceBytes);
  absl::string_view body(raw.data() + kNonceBytes, raw.size() - kNonceBytes - kTagBytes);
  std::string tag = raw.substr(raw.size() - kTagBytes);
  std::string out(body.size(), '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0;
  int total = 0;
  bool ok = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) &&
            EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, U(key->second), U(nonce)) &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &len, U(path), static_cast<int>(path.size())) &&
            EVP_DecryptUpdate(ctx.get(), U(out), &len, U(body), static_cast<int>(body.size()));
  total = len;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, U(tag)) &&
       EVP_DecryptFinal_ex(ctx.get(), U(out) + total, &len) > 0;
  if (!ok) {
    return absl::DataLossError(absl::StrCat("secret ", path, " does not open with key ",
                                            sealed.key_id, ": altered, or not its own"));
  }
  out.resize(total + len);
  return out;
}

}  // namespace paceline::secrets
