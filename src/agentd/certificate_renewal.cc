#include "agentd/certificate_renewal.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/atomic_file.h"
#include "common/status.h"
#include "paceline/v1/access.grpc.pb.h"
#include "tls/certificates.h"
#include "tls/join.h"

namespace paceline::agentd {
namespace {

namespace fs = std::filesystem;

std::string Next(const std::string& path) { return path + ".next"; }

// One file of the set, with what a store writes there.
struct Part {
  std::string path;
  mode_t mode;
  std::string text;
};

// The files in the order they are put in place, the certificate last (its .next is the mark),
// with the texts of `creds`.
std::vector<Part> InOrder(const CredentialFiles& files, const Credentials& creds = {}) {
  std::vector<Part> out = {{files.key, 0600, creds.key_pem}, {files.ca, 0644, creds.ca_pem}};
  if (!files.token.empty()) out.push_back({files.token, 0600, creds.token + "\n"});
  out.push_back({files.cert, 0644, creds.cert_pem});
  return out;
}

absl::Status SyncDirectories(const std::vector<Part>& parts) {
  std::set<std::string> dirs;
  for (const Part& part : parts) dirs.insert(fs::absolute(part.path).parent_path().string());
  for (const std::string& dir : dirs) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", dir));
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return absl::ErrnoToStatus(err, absl::StrCat("fsync ", dir));
  }
  return absl::OkStatus();
}

// Moves every FILE.next into place when the certificate's is there (a complete set); else
// removes the incomplete set's. The directories are synced only when a file was moved or removed.
absl::Status FinishOrDropStore(const CredentialFiles& files) {
  const std::vector<Part> parts = InOrder(files);
  std::error_code ec;
  const bool complete = fs::exists(Next(files.cert), ec);
  bool changed = false;
  for (const Part& part : parts) {
    const std::string next = Next(part.path);
    if (!fs::exists(next, ec)) continue;
    changed = true;
    if (complete) {
      fs::rename(next, part.path, ec);
      if (ec) return absl::UnavailableError(absl::StrCat("rename ", next, ": ", ec.message()));
    } else {
      fs::remove(next, ec);
    }
  }
  return changed ? SyncDirectories(parts) : absl::OkStatus();
}

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

}  // namespace

absl::StatusOr<absl::Time> RenewalDue(const std::string& cert_pem) {
  absl::StatusOr<tls::Validity> v = tls::CertificateValidity(cert_pem);
  if (!v.ok()) return v.status();
  return v->not_before + (v->not_after - v->not_before) * 2 / 3;
}

absl::Status StoreCredentials(const CredentialFiles& files, const Credentials& creds) {
  const std::vector<Part> parts = InOrder(files, creds);
  for (const Part& part : parts) {
    std::error_code ec;
    const fs::path parent = fs::path(part.path).parent_path();
    if (!parent.empty() && !fs::exists(parent, ec)) {
      fs::create_directories(parent, ec);
      if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", parent.string()));
      fs::permissions(parent, fs::perms::owner_all, ec);
    }
  }
  RETURN_IF_ERROR(FinishOrDropStore(files));  // a set left over goes first
  for (const Part& part : parts) {
    AtomicWriteOptions options;
    options.mode = part.mode;
    options.temp_suffix = absl::StrCat(".", ::getpid(), ".tmp");
    options.dir_sync = AtomicWriteOptions::DirSync::kNone;  // synced once, below
    const std::string next = Next(part.path);
    RETURN_IF_ERROR(WriteFileAtomically(next, part.text, options, [&](int, absl::string_view) {
      return absl::UnavailableError(absl::StrCat("cannot write ", next));
    }));
  }
  RETURN_IF_ERROR(SyncDirectories(parts));
  return FinishOrDropStore(files);
}

absl::StatusOr<Credentials> LoadCredentials(const CredentialFiles& files) {
  RETURN_IF_ERROR(FinishOrDropStore(files));
  Credentials out;
  for (const auto& [path, text] : {std::pair{&files.ca, &out.ca_pem},
                                   {&files.cert, &out.cert_pem},
                                   {&files.key, &out.key_pem},
                                   {&files.token, &out.token}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> read = tls::ReadFile(*path);
    if (!read.ok()) return read.status();
    *text = *std::move(read);
  }
  out.token = std::string(absl::StripAsciiWhitespace(out.token));
  absl::StatusOr<tls::Validity> validity = tls::CertificateValidity(out.cert_pem);
  absl::StatusOr<std::string> serial = tls::CertificateSerial(out.cert_pem);
  if (!validity.ok() || !serial.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(files.cert, ": not a PEM certificate"));
  }
  if (!tls::KeyMatchesCertificate(out.cert_pem, out.key_pem)) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.key, ": is not the key of the certificate in ", files.cert));
  }
  out.serial = *serial;
  out.not_after = validity->not_after;
  return out;
}

absl::StatusOr<Credentials> RenewCredentials(const CredentialFiles& files,
                                             const Credentials& current, const std::string& masters,
                                             absl::Duration timeout) {
  if (current.token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.token.empty() ? "--token-file" : files.token,
                     ": a renewal needs the agent token made at the join"));
  }
  absl::StatusOr<std::vector<std::string>> names = tls::CertificateNames(current.cert_pem);
  if (!names.ok() || names->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.cert, ": not a certificate of a joined host"));
  }
  const std::string& host = names->front();
  ASSIGN_OR_RETURN(tls::KeyAndCsr made, tls::MakeKeyAndCsr(host));
  absl::Status last = absl::InvalidArgumentError("no master address given");
  for (absl::string_view one : absl::StrSplit(masters, ',', absl::SkipWhitespace())) {
    const std::string addr(absl::StripAsciiWhitespace(one));
    grpc::SslCredentialsOptions mutual;
    mutual.pem_root_certs = current.ca_pem;
    mutual.pem_private_key = current.key_pem;
    mutual.pem_cert_chain = current.cert_pem;
    auto stub = v1::AccessService::NewStub(grpc::CreateChannel(addr, grpc::SslCredentials(mutual)));
    v1::JoinHostRequest req;
    req.set_token(current.token);
    req.set_host(host);
    req.set_csr_pem(made.csr_pem);
    v1::JoinHostResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    grpc::Status s = stub->JoinHost(&ctx, req, &resp);
    if (!s.ok()) {
      last = FromGrpc(s, absl::StrCat("renewing host ", host, "'s certificate at ", addr));
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
          s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        continue;
      }
      return last;
    }
    Credentials renewed{.ca_pem = current.ca_pem,
                        .cert_pem = resp.cert_pem(),
                        .key_pem = std::move(made.key_pem),
                        .token = resp.agent_token(),
                        .serial = resp.serial(),
                        .not_after = absl::FromUnixMillis(resp.not_after_unix_ms())};
    RETURN_IF_ERROR(StoreCredentials(files, renewed));
    return renewed;
  }
  return last;
}

}  // namespace paceline::agentd
