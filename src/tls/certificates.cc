#include "tls/certificates.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "tls/openssl_util.h"

namespace paceline::tls {
namespace {

using internal::AddExtension;
using internal::BioText;
using internal::OpenSslError;
using internal::Ptr;
using internal::Reader;

namespace fs = std::filesystem;

constexpr long kDay = 24 * 3600;

absl::StatusOr<std::string> CertPem(X509* x) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(bio.get(), x)) return OpenSslError("write a certificate");
  return BioText(bio.get());
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* k) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PrivateKey(bio.get(), k, nullptr, nullptr, 0, nullptr, nullptr)) {
    return OpenSslError("write a key");
  }
  return BioText(bio.get());
}

// Writes `text` to `path` whole: a temporary file of mode `mode`, fsynced, then renamed.
absl::Status WriteWhole(const std::string& path, const std::string& text, mode_t mode) {
  absl::Status s = WriteFileAtomically(path, text,
                                       {.mode = mode,
                                        .temp_suffix = absl::StrCat(".", ::getpid(), ".tmp"),
                                        .dir_sync = AtomicWriteOptions::DirSync::kNone});
  if (!s.ok()) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

struct Issued {
  Ptr<X509> cert;
  Ptr<EVP_PKEY> key;
};

enum class Kind { kCa, kServerAndClient };

// A new key and certificate for `cn` with alternative names `sans`, signed by `issuer` (null:
// self-signed).
absl::StatusOr<Issued> Issue(const std::string& cn, const std::vector<std::string>& sans, Kind kind,
                             X509* issuer, EVP_PKEY* issuer_key) {
  Issued out;
  out.key.reset(EVP_EC_gen("P-256"));
  out.cert.reset(X509_new());
  if (!out.key || !out.cert) return OpenSslError("make a key");
  X509* x = out.cert.get();
  X509_set_version(x, 2);
  Ptr<BIGNUM> serial(BN_new());
  if (!BN_rand(serial.get(), 120, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(x))) {
    return OpenSslError("make a serial number");
  }
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), (kind == Kind::kCa ? 3650 : 1825) * kDay);
  X509_set_pubkey(x, out.key.get());
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("Paceline"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : x;
  X509_set_issuer_name(x, X509_get_subject_name(signer));
  std::vector<std::pair<int, std::string>> exts = {
      {NID_basic_constraints,
       kind == Kind::kCa ? "critical,CA:TRUE,pathlen:0" : "critical,CA:FALSE"},
      {NID_key_usage, kind == Kind::kCa ? "critical,keyCertSign,cRLSign"
                                        : "critical,digitalSignature,keyAgreement"},
      {NID_subject_key_identifier, "hash"},
  };
  if (kind != Kind::kCa) {
    exts.push_back({NID_ext_key_usage, "serverAuth,clientAuth"});
    exts.push_back({NID_authority_key_identifier, "keyid:always"});
  }
  if (!sans.empty()) {
    std::vector<std::string> entries;
    for (const std::string& s : sans) {
      const bool ip = s.find_first_not_of("0123456789.") == std::string::npos ||
                      s.find(':') != std::string::npos;
      entries.push_back(absl::StrCat(ip ? "IP:" : "DNS:", s));
    }
    exts.push_back({NID_subject_alt_name, absl::StrJoin(entries, ",")});
  }
  for (const auto& [nid, value] : exts) {
    if (absl::Status s = AddExtension(x, signer, nid, value); !s.ok()) return s;
  }
  if (!X509_sign(x, issuer_key != nullptr ? issuer_key : out.key.get(), EVP_sha256())) {
    return OpenSslError("sign a certificate");
  }
  return out;
}

absl::Status WritePair(const Issued& issued, const std::string& cert_path,
                       const std::string& key_path) {
  absl::StatusOr<std::string> key = KeyPem(issued.key.get());
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> cert = CertPem(issued.cert.get());
  if (!cert.ok()) return cert.status();
  if (absl::Status s = WriteWhole(key_path, *key, 0600); !s.ok()) return s;
  return WriteWhole(cert_path, *cert, 0644);
}

absl::StatusOr<Issued> LoadCa(const std::string& dir) {
  absl::StatusOr<std::string> cert = ReadFile((fs::path(dir) / "ca.pem").string());
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile((fs::path(dir) / "ca.key").string());
  if (!key.ok()) return key.status();
  Ptr<BIO> cb = Reader(*cert);
  Ptr<BIO> kb = Reader(*key);
  Issued ca;
  ca.cert.reset(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  ca.key.reset(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!ca.cert || !ca.key) {
    return absl::FailedPreconditionError(absl::StrCat(dir, "/ca.pem or ca.key is unreadable"));
  }
  return ca;
}

absl::Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  fs::permissions(dir, fs::perms::owner_all, ec);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fs::exists(path) ? absl::UnavailableError(absl::StrCat("cannot read ", path))
                            : absl::NotFoundError(absl::StrCat(path, " does not exist"));
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<std::vector<std::string>> CertificateNames(const std::string& pem) {
  Ptr<BIO> bio = Reader(pem);
  Ptr<X509> x(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!x) return absl::InvalidArgumentError("not a PEM certificate");
  std::vector<std::string> names;
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(x.get()), NID_commonName, cn, sizeof cn) >
      0) {
    names.emplace_back(cn);
  }
  Ptr<GENERAL_NAMES> sans(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(x.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans.get(), i);
    if (g->type == GEN_DNS) {
      const ASN1_STRING* s = g->d.dNSName;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                         static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (g->type == GEN_IPADD) {
      const ASN1_STRING* s = g->d.iPAddress;
      const unsigned char* b = ASN1_STRING_get0_data(s);
      if (ASN1_STRING_length(s) == 4)
        names.push_back(absl::StrCat(b[0], ".", b[1], ".", b[2], ".", b[3]));
    }
  }
  return names;
}

absl::StatusOr<CertificateFiles> EnsureMasterCertificates(const std::string& dir,
                                                          const std::vector<std::string>& names) {
  if (absl::Status s = EnsureDir(dir); !s.ok()) return s;
  CertificateFiles files{(fs::path(dir) / "ca.pem").string(),
                         (fs::path(dir) / "master.pem").string(),
                         (fs::path(dir) / "master.key").string()};
  if (!fs::exists(files.ca)) {
    absl::StatusOr<Issued> ca = Issue("Paceline cluster CA", {}, Kind::kCa, nullptr, nullptr);
    if (!ca.ok()) return ca.status();
    if (absl::Status s = WritePair(*ca, files.ca, (fs::path(dir) / "ca.key").string()); !s.ok()) {
      return s;
    }
  }
  bool current = fs::exists(files.cert) && fs::exists(files.key);
  if (current) {
    absl::StatusOr<std::string> pem = ReadFile(files.cert);
    absl::StatusOr<std::vector<std::string>> held =
        pem.ok() ? CertificateNames(*pem) : pem.status();
    current = held.ok();
    for (const std::string& n : names) {
      current = current && std::find(held->begin(), held->end(), n) != held->end();
    }
  }
  if (!current) {
    absl::StatusOr<Issued> ca = LoadCa(dir);
    if (!ca.ok()) return ca.status();
    absl::StatusOr<Issued> master =
        Issue("paceline master", names, Kind::kServerAndClient, ca->cert.get(), ca->key.get());
    if (!master.ok()) return master.status();
    if (absl::Status s = WritePair(*master, files.cert, files.key); !s.ok()) return s;
  }
  return files;
}

absl::StatusOr<CertificateFiles> IssueAgentCertificate(const std::string& dir,
                                                       const std::string& host,
                                                       const std::string& out_dir) {
  absl::StatusOr<Issued> ca = LoadCa(dir);
  if (!ca.ok()) return ca.status();
  if (absl::Status s = EnsureDir(out_dir); !s.ok()) return s;
  CertificateFiles files{(fs::path(dir) / "ca.pem").string(),
                         (fs::path(out_dir) / (host + ".pem")).string(),
                         (fs::path(out_dir) / (host + ".key")).string()};
  // Server use too: the agent serves its /metrics with it (agentd/agent_metrics.h).
  absl::StatusOr<Issued> agent =
      Issue(host, {host}, Kind::kServerAndClient, ca->cert.get(), ca->key.get());
  if (!agent.ok()) return agent.status();
  if (absl::Status s = WritePair(*agent, files.cert, files.key); !s.ok()) return s;
  return files;
}

}  // namespace paceline::tls
