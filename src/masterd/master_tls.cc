#include "masterd/master_tls.h"

#include <unistd.h>

#include <filesystem>

#include <grpcpp/security/server_credentials.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/net.h"
#include "tls/certificate_dates.h"
#include "tls/certificates.h"

namespace paceline::masterd {

absl::StatusOr<MasterTls> SetUpTls(const MasterConfig& config) {
  const std::string grpc_addr = config.grpc_listen.ToString();
  const std::string http_addr = config.http_listen.ToString();
  MasterTls out;
  if (config.insecure_loopback) {
    if (!IsLoopback(config.grpc_listen.host) || !IsLoopback(config.http_listen.host) ||
        (!config.metrics_listen.host.empty() && !IsLoopback(config.metrics_listen.host))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--insecure-loopback: plain text is served on a loopback address only, and --listen "
          "is ",
          grpc_addr, ", --http-listen ", http_addr,
          config.metrics_listen.host.empty()
              ? ""
              : absl::StrCat(", --metrics-listen ", config.metrics_listen.ToString()),
          "; drop --insecure-loopback to serve TLS (the master makes its certificates under ",
          config.tls_dir.empty() ? "DATA_DIR/tls" : config.tls_dir, ")"));
    }
    out.credentials = grpc::InsecureServerCredentials();
    return out;
  }
  const std::string dir = config.tls_dir.empty()
                              ? (std::filesystem::path(config.data_dir) / "tls").string()
                              : config.tls_dir;
  std::vector<std::string> names = {"localhost", "127.0.0.1"};
  char hostname[256] = {0};
  if (::gethostname(hostname, sizeof hostname - 1) == 0 && hostname[0] != '\0') {
    names.emplace_back(hostname);
  }
  auto add = [&](const std::string& host) {
    if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") return;
    if (std::find(names.begin(), names.end(), host) == names.end()) names.push_back(host);
  };
  add(config.grpc_listen.host);
  add(config.http_listen.host);
  add(config.metrics_listen.host);
  if (!config.advertise.empty()) add(config.advertise.substr(0, config.advertise.rfind(':')));
  absl::StatusOr<tls::CertificateFiles> files = tls::EnsureMasterCertificates(dir, names);
  if (!files.ok()) {
    return absl::Status(files.status().code(), absl::StrCat("making the master's certificates: ",
                                                            files.status().message()));
  }
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  absl::StatusOr<std::string> ca = tls::ReadFile(files->ca);
  absl::StatusOr<std::string> cert = tls::ReadFile(files->cert);
  absl::StatusOr<std::string> key = tls::ReadFile(files->key);
  for (const auto* s : {&ca, &cert, &key}) {
    if (!s->ok()) return s->status();
  }
  options.pem_root_certs = *ca;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  out.credentials = grpc::SslServerCredentials(options);
  out.on = true;
  out.ca_file = files->ca;
  out.http = http::HttpTls{files->cert, files->key};
  return out;
}

std::vector<api::CertificateExpiry> CertificateExpiries(const MasterTls& tls) {
  std::vector<api::CertificateExpiry> out;
  if (!tls.on) return out;
  for (const auto& [name, file] : {std::pair<std::string, std::string>{"ca", tls.ca_file},
                                   {"master", tls.http ? tls.http->cert_file : ""}}) {
    if (file.empty()) continue;
    absl::StatusOr<std::string> pem = tls::ReadFile(file);
    if (!pem.ok()) continue;
    absl::StatusOr<absl::Time> not_after = tls::CertificateNotAfter(*pem);
    if (not_after.ok()) out.push_back({name, file, *not_after});
  }
  return out;
}

}  // namespace paceline::masterd
