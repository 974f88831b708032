// `paceline agent join ADDR --token T --ca-hash sha256:H` (docs/operations.md "Joining
// hosts"): a new host gets its certificate from the master with a join token, as `kubeadm join`
// does.
//
//   1. fetch the cluster's CA from the master (AccessService.GetClusterCa), over TLS that does
//      not yet verify the master: nothing is trusted until step 2;
//   2. check the CA's hash against --ca-hash; a mismatch stops here, nothing written;
//   3. make a key and a CSR for the host's name here (the key never leaves the host);
//   4. send the CSR with the token over TLS verified against that CA (AccessService.JoinHost);
//      the master consumes the token and answers the signed certificate and an agent token;
//   5. store the CA, the certificate, the key (0600) and the agent token (0600), each written
//      whole, where `paceline agent` reads them: by default DIR/ca.pem, agent.pem, agent.key
//      and agent-token; with --config, the agent config file's ca, cert, key and token-file.
// Every refusal (a wrong hash, a token expired or used, a request the master refuses) writes
// nothing.
//
// `paceline agent renew [ADDR] [--dir DIR | --config FILE] [--if-due]` renews the certificate
// before it ends: a new key and CSR, sent with the agent token over mutual TLS with the current
// certificate (JoinHost again, access_service.h); the new certificate, key and agent token
// replace the old files (agentd/certificate_renewal.h). With --if-due, only once two thirds of
// the certificate's validity have passed. A running agent does the same by itself
// (agent_daemon.h) and presents a certificate renewed here at its next check.

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "access/grant.h"
#include "agentd/certificate_renewal.h"
#include "common/status.h"
#include "common/units.h"
#include "main/commands.h"
#include "main/daemon_config.h"
#include "main/daemon_flags.h"
#include "paceline/v1/access.grpc.pb.h"
#include "tls/certificates.h"
#include "tls/join.h"

namespace paceline::cli {
namespace {

namespace fs = std::filesystem;

struct JoinFlags {
  std::string master, token, ca_hash, name, dir = "/etc/paceline/tls", config;
  std::string timeout = "30s";
  bool if_due = false;
};

using JoinFiles = agentd::CredentialFiles;

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

std::unique_ptr<grpc::ClientContext> Context(absl::Duration timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return ctx;
}

// The CA from `addr`, before it can be trusted: TLS that checks no certificate.
absl::StatusOr<std::string> FetchCa(const std::string& addr, absl::Duration timeout) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_verify_server_certs(false);
  options.set_check_call_host(false);
  options.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
  auto stub = v1::AccessService::NewStub(
      grpc::CreateChannel(addr, grpc::experimental::TlsCredentials(options)));
  v1::GetClusterCaResponse resp;
  grpc::Status s = stub->GetClusterCa(Context(timeout).get(), v1::GetClusterCaRequest(), &resp);
  if (!s.ok()) return FromGrpc(s, absl::StrCat("fetching the cluster's CA from ", addr));
  return resp.ca_pem();
}

// Where the files go: the agent config file's keys when --config names one, else DIR.
absl::StatusOr<JoinFiles> FilesOf(JoinFlags& f) {
  JoinFiles out{(fs::path(f.dir) / "ca.pem").string(), (fs::path(f.dir) / "agent.pem").string(),
                (fs::path(f.dir) / "agent.key").string(),
                (fs::path(f.dir) / "agent-token").string()};
  if (f.config.empty()) return out;
  CLI::App scratch;
  AgentFlags agent;
  DaemonSettings settings("paceline agent");
  AddAgentFlags(&scratch, agent, /*with_master=*/true, settings);
  if (absl::Status s = settings.ApplyFileAt(f.config); !s.ok()) return s;
  for (const auto& [key, value] : {std::pair<const char*, std::string*>{"ca", &agent.ca},
                                   {"cert", &agent.cert},
                                   {"key", &agent.key},
                                   {"token-file", &agent.token_file}}) {
    if (value->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.config, ": ", key,
                       ": is not set; `paceline agent join --config` stores the "
                       "certificate where the file's ca, cert, key and token-file say"));
    }
  }
  if (f.master.empty()) f.master = agent.master;
  if (f.name.empty()) f.name = agent.name;
  return JoinFiles{agent.ca, agent.cert, agent.key, agent.token_file};
}

absl::Status Join(JoinFlags f) {
  absl::StatusOr<JoinFiles> files = FilesOf(f);
  if (!files.ok()) return files.status();
  if (f.master.empty()) {
    return absl::InvalidArgumentError(
        "ADDR: required: the master's gRPC address HOST:PORT (or `master:` in --config's file)");
  }
  if (f.token.empty()) {
    return absl::InvalidArgumentError(
        "--token: required: a join token (`paceline token create --role agent --join`)");
  }
  const std::string want = absl::AsciiStrToLower(f.ca_hash);
  if (!absl::StartsWith(want, "sha256:") || want.size() != 7 + 64 ||
      want.find_first_not_of("0123456789abcdef", 7) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ca-hash: '", f.ca_hash,
        "' is not sha256: and 64 hex digits (printed by `paceline token create --join`)"));
  }
  if (f.name.empty()) {
    char hostname[256] = {0};
    if (::gethostname(hostname, sizeof hostname - 1) == 0) f.name = hostname;
  }
  if (!access::IsValidName(f.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name: '", f.name, "' is not 1 to 64 of A-Z a-z 0-9 . _ @ -"));
  }
  absl::StatusOr<absl::Duration> timeout = ParseDurationStrict(f.timeout);
  if (!timeout.ok()) return WithFlag(timeout.status(), "--timeout");

  // Several masters: the first that answers (a standby refuses and names the leader).
  absl::Status last = absl::UnavailableError("no master");
  for (absl::string_view one : absl::StrSplit(f.master, ',', absl::SkipWhitespace())) {
    const std::string addr(absl::StripAsciiWhitespace(one));
    absl::StatusOr<std::string> ca = FetchCa(addr, *timeout);
    if (!ca.ok()) {
      last = ca.status();
      if (ca.status().code() == absl::StatusCode::kUnavailable) continue;
      return last;
    }
    absl::StatusOr<std::string> got = tls::CaHash(*ca);
    if (!got.ok()) return absl::InvalidArgumentError(absl::StrCat(addr, " sent no certificate"));
    if (*got != want) {
      return absl::PermissionDeniedError(absl::StrCat(
          "--ca-hash: the master at ", addr, " presents a CA whose hash is ", *got, ", and ", want,
          " was pinned: not joining, nothing written (is ADDR the right "
          "cluster's master?)"));
    }
    absl::StatusOr<tls::KeyAndCsr> made = tls::MakeKeyAndCsr(f.name);
    if (!made.ok()) return made.status();
    grpc::SslCredentialsOptions verified;
    verified.pem_root_certs = *ca;
    auto stub =
        v1::AccessService::NewStub(grpc::CreateChannel(addr, grpc::SslCredentials(verified)));
    v1::JoinHostRequest req;
    req.set_token(f.token);
    req.set_host(f.name);
    req.set_csr_pem(made->csr_pem);
    v1::JoinHostResponse resp;
    grpc::Status s = stub->JoinHost(Context(*timeout).get(), req, &resp);
    if (!s.ok()) {
      last = FromGrpc(s, absl::StrCat("joining ", addr, " as host ", f.name));
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE) continue;
      return last;
    }
    RETURN_IF_ERROR(agentd::StoreCredentials(*files, {.ca_pem = *ca,
                                                      .cert_pem = resp.cert_pem(),
                                                      .key_pem = made->key_pem,
                                                      .token = resp.agent_token()}));
    std::cout << "host " << f.name << " joined: certificate " << resp.serial() << ", valid until "
              << absl::FormatTime(absl::RFC3339_sec, absl::FromUnixMillis(resp.not_after_unix_ms()),
                                  absl::UTCTimeZone())
              << "\n  CA:          " << files->ca << "\n  certificate: " << files->cert
              << "\n  key:         " << files->key << "\n  agent token: " << files->token << "\n";
    if (f.config.empty()) {
      std::cout << "start the agent with:\n  paceline agent --master " << f.master << " --name "
                << f.name << " --ca " << files->ca << " --cert " << files->cert << " --key "
                << files->key << " --token-file " << files->token << "\n";
    } else {
      std::cout << "start the agent with:\n  paceline agent --config " << f.config << "\n";
    }
    std::cout << std::flush;
    return absl::OkStatus();
  }
  return last;
}

absl::Status Renew(JoinFlags f) {
  absl::StatusOr<JoinFiles> files = FilesOf(f);
  if (!files.ok()) return files.status();
  if (f.master.empty()) {
    return absl::InvalidArgumentError(
        "ADDR: required: the master's gRPC address HOST:PORT (or `master:` in --config's file)");
  }
  absl::StatusOr<absl::Duration> timeout = ParseDurationStrict(f.timeout);
  if (!timeout.ok()) return WithFlag(timeout.status(), "--timeout");
  ASSIGN_OR_RETURN(agentd::Credentials current, agentd::LoadCredentials(*files));
  ASSIGN_OR_RETURN(absl::Time due, agentd::RenewalDue(current.cert_pem));
  if (f.if_due && absl::Now() < due) {
    std::cout << "certificate " << current.serial << " valid until "
              << absl::FormatTime(absl::RFC3339_sec, current.not_after, absl::UTCTimeZone())
              << "; renewed from " << absl::FormatTime(absl::RFC3339_sec, due, absl::UTCTimeZone())
              << std::endl;
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(agentd::Credentials renewed,
                   agentd::RenewCredentials(*files, current, f.master, *timeout));
  std::cout << "certificate renewed: " << renewed.serial << ", valid until "
            << absl::FormatTime(absl::RFC3339_sec, renewed.not_after, absl::UTCTimeZone())
            << "; a running agent presents it within its --cert-check interval (its tasks keep "
               "running)"
            << std::endl;
  return absl::OkStatus();
}

}  // namespace

void RegisterJoinCommand(CLI::App* agent, CommandContext& ctx) {
  static JoinFlags f;
  CLI::App* join = agent->add_subcommand(
      "join",
      "join this host to a cluster with a join token: fetch the CA (checked against --ca-hash), "
      "get a certificate for a key made here, store them for `paceline agent`");
  join->add_option("addr", f.master,
                   "the master's gRPC address HOST:PORT, or several (comma-separated); default: "
                   "the config file's master");
  join->add_option("--token", f.token,
                   "the join token (`paceline token create --role agent --join`)")
      ->envname("PACELINE_JOIN_TOKEN");
  join->add_option("--ca-hash", f.ca_hash,
                   "sha256:HEX, the cluster CA's hash printed with the token")
      ->required();
  join->add_option("--name", f.name, "the host name to join as (default: hostname)");
  join->add_option("--dir", f.dir, "where to store ca.pem, agent.pem, agent.key and agent-token")
      ->capture_default_str();
  join->add_option("--config", f.config,
                   "an agent config file: store where its ca, cert, key and token-file say, and "
                   "take its master and name");
  join->add_option("--timeout", f.timeout, "give up on a master after this long")
      ->capture_default_str();
  join->callback([&ctx] {
    if (absl::Status s = Join(f); !s.ok()) ctx.Fail(s);
  });

  static JoinFlags r;
  CLI::App* renew = agent->add_subcommand(
      "renew",
      "renew this joined host's certificate before it ends (a new key, signed by the master "
      "for the current certificate and agent token); a running agent renews by itself "
      "(--cert-check)");
  renew->add_option("addr", r.master,
                    "the master's gRPC address HOST:PORT, or several (comma-separated); default: "
                    "the config file's master");
  renew->add_option("--dir", r.dir, "where ca.pem, agent.pem, agent.key and agent-token are")
      ->capture_default_str();
  renew->add_option("--config", r.config,
                    "an agent config file: the files where its ca, cert, key and token-file say, "
                    "and its master");
  renew->add_flag("--if-due", r.if_due,
                  "only once two thirds of the certificate's validity have passed");
  renew->add_option("--timeout", r.timeout, "give up on a master after this long")
      ->capture_default_str();
  renew->callback([&ctx] {
    if (absl::Status s = Renew(r); !s.ok()) ctx.Fail(s);
  });
}

}  // namespace paceline::cli
