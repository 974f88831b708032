// Daemon commands: master, agent, up (see main/commands.h).
//
// The daemons run in the foreground until SIGINT or SIGTERM, then stop cleanly (in-flight
// requests finish, the endpoints file is removed) and exit 0. An agent that stops leaves its
// tasks running: the next agent on the same work dir re-adopts them.

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>
#include <tuple>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "access/grant.h"
#include "agentd/agent_daemon.h"
#include "agentd/certificate_renewal.h"
#include "common/defaults.h"
#include "common/net.h"
#include "common/status.h"
#include "common/units.h"
#include "common/version.h"
#include "dns/names.h"
#include "http/http_server.h"
#include "main/commands.h"
#include "main/daemon_flags.h"
#include "main/sandbox_path.h"
#include "main/stop_signals.h"
#include "masterd/master.h"
#include "placement/profile.h"
#include "spec/spec_validation.h"
#include "tls/certificates.h"

namespace paceline::cli {
namespace {

absl::StatusOr<masterd::MasterConfig> MasterConfigOf(const MasterFlags& f) {
  masterd::MasterConfig config;
  config.data_dir = f.data_dir;
  config.store = f.store;
  config.advertise = f.advertise;
  auto lease = ParseDurationStrict(f.lease);
  if (!lease.ok()) return WithFlag(lease.status(), "--lease");
  if (*lease < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--lease: must be at least 1s");
  }
  config.lease = *lease;
  auto read_bound = ParseDurationStrict(f.standby_read_bound);
  if (!read_bound.ok()) return WithFlag(read_bound.status(), "--standby-read-bound");
  if (*read_bound < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--standby-read-bound: must not be negative");
  }
  config.standby_read_bound = *read_bound;
  config.token_file = f.token_file;
  config.agent_token_file = f.agent_token_file;
  config.secrets_key_file = f.secrets_key_file;
  config.tls_dir = f.tls_dir;
  config.insecure_loopback = f.insecure_loopback;
  config.backfill = !f.no_backfill;
  if (absl::Status p = placement::NamedProfileSpec(f.placement).status(); !p.ok()) {
    return WithFlag(p, "--placement");
  }
  config.placement_profile = f.placement;
  auto candidates = placement::ParseCandidates(f.placement_candidates);
  if (!candidates.ok()) return WithFlag(candidates.status(), "--placement-candidates");
  config.placement_candidates = *candidates;
  auto retention = ParseDurationStrict(f.audit_retention);
  if (!retention.ok()) return WithFlag(retention.status(), "--audit-retention");
  if (*retention < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--audit-retention: must not be negative");
  }
  config.audit_retention = *retention;
  auto task_ttl = ParseDurationStrict(f.task_credential_ttl);
  if (!task_ttl.ok()) return WithFlag(task_ttl.status(), "--task-credential-ttl");
  if (*task_ttl < absl::Seconds(3)) {
    return absl::InvalidArgumentError(absl::StrCat("--task-credential-ttl: ", f.task_credential_ttl,
                                                   " is too short; expected 3s or more"));
  }
  config.task_credential_ttl = *task_ttl;
  auto cert_validity = ParseDurationStrict(f.host_cert_validity);
  if (!cert_validity.ok()) return WithFlag(cert_validity.status(), "--host-cert-validity");
  if (*cert_validity < absl::Seconds(10)) {
    return absl::InvalidArgumentError(absl::StrCat("--host-cert-validity: ", f.host_cert_validity,
                                                   " is too short; expected 10s or more"));
  }
  config.host_cert_validity = *cert_validity;
  if (f.retain_terminal == "forever") {
    config.retain_terminal = absl::InfiniteDuration();
  } else {
    auto retain = ParseDurationStrict(f.retain_terminal);
    if (!retain.ok()) return WithFlag(retain.status(), "--retain-terminal");
    if (*retain < kMinRetainTerminal) {
      return absl::InvalidArgumentError(
          absl::StrCat("--retain-terminal: ", f.retain_terminal, " is below the minimum of ",
                       FormatDurationShort(kMinRetainTerminal), "; expected e.g. 7d, or forever"));
    }
    config.retain_terminal = *retain;
  }
  config.archive_dir = f.archive_dir;
  auto period = ParseDurationStrict(f.retention_period);
  if (!period.ok()) return WithFlag(period.status(), "--retention-period");
  if (*period < absl::Milliseconds(100) || *period > absl::Hours(1)) {
    return absl::InvalidArgumentError("--retention-period: must be between 100ms and 1h");
  }
  config.retention_period = *period;
  auto grpc_listen = ParseHostPort(f.listen);
  if (!grpc_listen.ok()) return WithFlag(grpc_listen.status(), "--listen");
  auto http_listen = ParseHostPort(f.http_listen);
  if (!http_listen.ok()) return WithFlag(http_listen.status(), "--http-listen");
  config.grpc_listen = *grpc_listen;
  config.http_listen = *http_listen;
  if (!f.dns_listen.empty()) {
    auto dns_listen = ParseHostPort(f.dns_listen);
    if (!dns_listen.ok()) return WithFlag(dns_listen.status(), "--dns-listen");
    config.dns_listen = *dns_listen;
  }
  if (!f.metrics_listen.empty()) {
    auto metrics_listen = ParseHostPort(f.metrics_listen);
    if (!metrics_listen.ok()) return WithFlag(metrics_listen.status(), "--metrics-listen");
    config.metrics_listen = *metrics_listen;
  }
  config.metrics_clients = f.metrics_clients;
  auto domain = dns::NormalizeDomain(f.dns_domain);
  if (!domain.ok()) return WithFlag(domain.status(), "--dns-domain");
  config.dns_domain = *domain;
  if (!(f.dns_rate_limit >= 0 && f.dns_rate_limit <= 1e9)) {
    return absl::InvalidArgumentError(absl::StrCat("--dns-rate-limit: ", f.dns_rate_limit,
                                                   " is out of range; expected 0 to 1000000000"));
  }
  config.dns_rate_limit = f.dns_rate_limit;
  auto timeout = ParseDurationStrict(f.host_timeout);
  if (!timeout.ok()) return WithFlag(timeout.status(), "--host-timeout");
  config.host_timeout = *timeout;
  auto heartbeat = ParseDurationStrict(f.heartbeat_interval);
  if (!heartbeat.ok()) return WithFlag(heartbeat.status(), "--heartbeat-interval");
  if (*heartbeat < absl::Milliseconds(100) || *heartbeat >= *timeout) {
    return absl::InvalidArgumentError(
        "--heartbeat-interval: must be at least 100ms and shorter than --host-timeout");
  }
  config.heartbeat_interval = *heartbeat;
  auto cycle = ParseDurationStrict(f.cycle);
  if (!cycle.ok()) return WithFlag(cycle.status(), "--cycle");
  if (*cycle < absl::Milliseconds(1)) {
    return absl::InvalidArgumentError("--cycle: must be at least 1ms");
  }
  config.cycle = *cycle;
  auto history = ParseDurationStrict(f.history_period);
  if (!history.ok()) return WithFlag(history.status(), "--history-period");
  if (*history < absl::Seconds(1) || *history > absl::Hours(1)) {
    return absl::InvalidArgumentError("--history-period: must be between 1s and 1h");
  }
  config.history_period = *history;
  return config;
}

absl::StatusOr<agentd::AgentDaemonConfig> AgentConfigOf(const AgentFlags& f,
                                                        const std::string& default_work_dir) {
  agentd::AgentDaemonConfig c;
  c.master_addr = f.master;
  char hostname[256] = {};
  gethostname(hostname, sizeof(hostname) - 1);
  c.agent.name = f.name.empty() ? std::string(hostname) : f.name;
  c.agent.work_dir = f.work_dir.empty() ? default_work_dir : f.work_dir;
  c.agent.work_dir = std::filesystem::absolute(c.agent.work_dir).string();
  for (const std::string& l : f.labels) {
    std::pair<std::string, std::string> kv = absl::StrSplit(l, absl::MaxSplits('=', 1));
    if (kv.first.empty() || l.find('=') == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--label: '", l, "' is not KEY=VALUE"));
    }
    c.agent.labels[kv.first] = kv.second;
  }
  if (!f.cpu.empty()) {
    auto v = ParseCpu(f.cpu);
    if (!v.ok()) return WithFlag(v.status(), "--cpu");
    c.agent.cpu_milli = *v;
  }
  if (!f.memory.empty()) {
    auto v = ParseBytes(f.memory);
    if (!v.ok()) return WithFlag(v.status(), "--memory");
    c.agent.memory_bytes = *v;
  }
  if (!f.disk.empty()) {
    auto v = ParseBytes(f.disk);
    if (!v.ok()) return WithFlag(v.status(), "--disk");
    c.agent.disk_bytes = *v;
  }
  auto rc = ParseCpu(f.reserve_cpu);
  if (!rc.ok()) return WithFlag(rc.status(), "--reserve-cpu");
  c.agent.reserved_cpu_milli = *rc;
  auto rm = ParseBytes(f.reserve_memory);
  if (!rm.ok()) return WithFlag(rm.status(), "--reserve-memory");
  c.agent.reserved_memory_bytes = *rm;
  std::pair<std::string, std::string> range = absl::StrSplit(f.ports, absl::MaxSplits('-', 1));
  uint32_t lo = 0, hi = 0;
  if (!absl::SimpleAtoi(range.first, &lo) || !absl::SimpleAtoi(range.second, &hi) || lo == 0 ||
      hi > 65535 || lo > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ports: '", f.ports, "' is not a range FIRST-LAST within 1-65535"));
  }
  c.agent.port_min = static_cast<uint16_t>(lo);
  c.agent.port_max = static_cast<uint16_t>(hi);
  c.agent.task_user = f.task_user;
  if (f.cgroup != "auto" && f.cgroup != "v2" && f.cgroup != "v1" && f.cgroup != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--cgroup: '", f.cgroup, "' is not one of auto, v2, v1, none"));
  }
  c.agent.cgroup = f.cgroup == "v2"     ? agent::CgroupPreference::kV2
                   : f.cgroup == "v1"   ? agent::CgroupPreference::kV1
                   : f.cgroup == "none" ? agent::CgroupPreference::kNone
                                        : agent::CgroupPreference::kAuto;
  c.agent.cgroup_parent = f.cgroup_parent;
  if (!f.address.empty()) {
    in6_addr ip;
    if (::inet_pton(AF_INET, f.address.c_str(), &ip) != 1 &&
        ::inet_pton(AF_INET6, f.address.c_str(), &ip) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--address: '", f.address, "' is not an IPv4 or IPv6 address"));
    }
    c.agent.base_env["PACELINE_HOST_ADDRESS"] = f.address;
  }
  auto usage_interval = ParseDurationStrict(f.usage_interval);
  if (!usage_interval.ok()) return WithFlag(usage_interval.status(), "--usage-interval");
  if (*usage_interval < absl::Milliseconds(100)) {
    return absl::InvalidArgumentError("--usage-interval: must be at least 100ms");
  }
  c.usage_interval = *usage_interval;
  auto cert_check = ParseDurationStrict(f.cert_check);
  if (!cert_check.ok()) return WithFlag(cert_check.status(), "--cert-check");
  if (*cert_check < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--cert-check: expected a duration such as 1h, or 0 (never)");
  }
  c.cert_check = *cert_check;
  c.agent.container_runtime = f.container_runtime;
  c.agent.cdi_dirs = f.cdi_dirs;
  c.agent.nvml_library = f.nvml_library;
  c.agent.image_dir = f.image_dir;
  auto cache = ParseBytes(f.image_cache);
  if (!cache.ok()) return WithFlag(cache.status(), "--image-cache");
  c.agent.image_cache_bytes = *cache;
  c.agent.registry_ca_file = f.registry_ca;
  auto registry_timeout = ParseDurationStrict(f.registry_timeout);
  if (!registry_timeout.ok()) return WithFlag(registry_timeout.status(), "--registry-timeout");
  if (*registry_timeout < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--registry-timeout: must be at least 1s");
  }
  c.agent.registry_stall_timeout = *registry_timeout;
  for (const std::string& p : f.container_host_paths) {
    if (p.empty() || p.front() != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("--container-host-path: '", p, "' is not an absolute path"));
    }
  }
  c.agent.container_host_paths = f.container_host_paths;
  return c;
}

// The HTTP side's base URL: HTTPS when the master serves TLS (its CA is then in the file).
std::string HttpUrl(const MasterEndpoints& e) {
  return absl::StrCat(e.ca_file.empty() ? "http://" : "https://", e.http);
}

// `paceline master`; with `print`, shows the effective configuration instead of starting.
absl::Status RunMaster(const MasterFlags& f, const DaemonSettings& settings, bool print) {
  absl::StatusOr<masterd::MasterConfig> config = MasterConfigOf(f);
  if (!config.ok()) return settings.Locate(config.status());
  if (print) {
    std::cout << settings.Print() << std::flush;
    return absl::OkStatus();
  }
  sigset_t stop_signals = BlockStopSignals();
  auto m = masterd::Master::Start(*config);
  if (!m.ok()) return m.status();
  std::cout << "paceline master " << Version() << " (commit " << Commit() << ")\n"
            << "  store:  " << (*m)->store_description() << "\n"
            << "  gRPC:   " << (*m)->endpoints().grpc << "\n"
            << "  HTTP:   " << HttpUrl((*m)->endpoints()) << "/healthz\n"
            << ((*m)->endpoints().metrics.empty()
                    ? ""
                    : absl::StrCat(
                          "  metrics: ", (*m)->endpoints().ca_file.empty() ? "http://" : "https://",
                          (*m)->endpoints().metrics, "/metrics\n"))
            << "  token:  " << (*m)->endpoints().token_file << " (admin)\n"
            << "  agents: " << (*m)->endpoints().agent_token_file << "\n"
            << "Ctrl-C stops it." << std::endl;
  WaitForStopSignal(stop_signals);
  (*m)->Shutdown();
  std::cout << "stopped" << std::endl;
  return absl::OkStatus();
}

// The agent's TLS files: none (plain text), or the CA with the agent's certificate and key, and
// the agent token made with them when it has one (a joined host): read once, with the
// certificate, so that the token and the certificate come from the same renewal. A renewal the
// agent was stopped in is finished first (agentd/certificate_renewal.h).
absl::Status ReadAgentTls(const agentd::CredentialFiles& files, agentd::AgentDaemonConfig& config) {
  if (files.ca.empty() && files.cert.empty() && files.key.empty()) return absl::OkStatus();
  if (files.ca.empty() || files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(
        "--ca, --cert, --key: give all three (TLS, the master checks the certificate's host) "
        "or none (plain text, a master started with --insecure-loopback)");
  }
  absl::StatusOr<agentd::Credentials> creds = agentd::LoadCredentials(files);
  if (!creds.ok()) return creds.status();
  config.ca_pem = creds->ca_pem;
  config.cert_pem = creds->cert_pem;
  config.key_pem = creds->key_pem;
  config.token = creds->token;
  return absl::OkStatus();
}

absl::Status RunAgent(const AgentFlags& f, const DaemonSettings& settings, bool print) {
  if (f.master.empty()) {
    return absl::InvalidArgumentError(
        "--master: is required; expected the master's gRPC address HOST:PORT, as a flag or as "
        "`master:` in the config file");
  }
  absl::StatusOr<agentd::AgentDaemonConfig> config = AgentConfigOf(f, "agent-work");
  if (!config.ok()) return settings.Locate(config.status());
  if (print) {
    std::cout << settings.Print() << std::flush;
    return absl::OkStatus();
  }
  const agentd::CredentialFiles files{f.ca, f.cert, f.key, f.token_file};
  if (absl::Status s = ReadAgentTls(files, *config); !s.ok()) return settings.Locate(s);
  if (!f.token_file.empty() && config->cert_pem.empty()) {  // plain text: the token alone
    absl::StatusOr<std::string> token = masterd::LoadOrCreateToken(f.token_file);
    if (!token.ok()) return settings.Locate(WithFlag(token.status(), "--token-file"));
    config->token = *token;
  } else if (!f.token_file.empty()) {
    // A joined host (ReadAgentTls read its token): it renews its certificate by itself.
    config->renewal_files = files;
  }
  if (!f.metrics_listen.empty()) {
    absl::StatusOr<HostPort> listen = ParseHostPort(f.metrics_listen);
    if (!listen.ok()) return settings.Locate(WithFlag(listen.status(), "--metrics-listen"));
    agentd::AgentMetricsOptions metrics{.listen = *listen, .clients = f.metrics_clients};
    if (!config->cert_pem.empty()) {
      metrics.tls = http::HttpTls{.cert_file = f.cert, .key_file = f.key, .client_ca_file = f.ca};
    }
    config->metrics = std::move(metrics);
  }
  sigset_t stop_signals = BlockStopSignals();
  agentd::AgentDaemon daemon(*config);
  absl::Status result;
  std::thread runner([&] { result = daemon.Run(); });
  std::thread waiter([&] {
    WaitForStopSignal(stop_signals);
    daemon.Stop();
  });
  runner.join();
  if (!result.ok()) {
    pthread_kill(waiter.native_handle(), SIGTERM);  // release the waiter
  }
  waiter.join();
  return result;
}

// `paceline cert agent HOST` and `paceline cert client NAME`: NAME.pem and NAME.key made with the
// cluster's CA into --out (default TLS_DIR/SUBDIR); `hint` says what to do with them.
struct CertFlags {
  std::string name, tls_dir = std::string(defaults::kDataDir) + "/tls", out;
};
void AddCertCommand(
    CLI::App* group, CommandContext& ctx, CertFlags& f, const std::string& command,
    const std::string& help, const std::string& name_help, const std::string& subdir,
    std::function<std::string(const std::string& name, const tls::CertificateFiles&)> hint) {
  CLI::App* cmd = group->add_subcommand(command, help);
  cmd->add_option("name", f.name, name_help)->required();
  cmd->add_option("--tls-dir", f.tls_dir, "where the CA is (the master's --tls-dir)")
      ->capture_default_str();
  cmd->add_option(
      "--out", f.out,
      absl::StrCat("where to write NAME.pem and NAME.key (default: TLS_DIR/", subdir, ")"));
  cmd->callback([&ctx, &f, subdir, hint] {
    if (!access::IsValidName(f.name)) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("name: '", f.name, "' is not 1 to 64 of A-Z a-z 0-9 . _ @ -")));
    }
    const std::string out = f.out.empty() ? f.tls_dir + "/" + subdir : f.out;
    absl::StatusOr<tls::CertificateFiles> files =
        tls::IssueAgentCertificate(f.tls_dir, f.name, out);
    if (!files.ok()) return ctx.Fail(files.status());
    std::cout << "certificate: " << files->cert << "\nkey:         " << files->key
              << "\nCA:          " << files->ca << "\n"
              << hint(f.name, *files) << std::endl;
  });
}

// `paceline up`: a master and one local agent in one process.
absl::Status RunUp(const MasterFlags& mf, const AgentFlags& af, const DaemonSettings& settings,
                   bool print) {
  absl::StatusOr<masterd::MasterConfig> config = MasterConfigOf(mf);
  if (!config.ok()) return settings.Locate(config.status());
  // The local agent's settings are checked before anything starts (its work dir is known later).
  if (auto agent = AgentConfigOf(af, "agent-work"); !agent.ok()) {
    return settings.Locate(agent.status());
  }
  if (print) {
    std::cout << settings.Print() << std::flush;
    return absl::OkStatus();
  }
  sigset_t stop_signals = BlockStopSignals();
  auto m = masterd::Master::Start(*config);
  if (!m.ok()) return m.status();
  AgentFlags local = af;
  local.master = (*m)->endpoints().grpc;
  if (local.name.empty()) local.name = "local";
  std::filesystem::path work_dir = std::filesystem::path(config->data_dir) / "agent";
  if (local.work_dir.empty() && geteuid() == 0 && !TraversableByOthers(work_dir)) {
    // Tasks run as an unprivileged user and could not reach sandboxes under a private
    // directory (e.g. a clone under /root): keep the agent's state where they can.
    work_dir = std::filesystem::path("/var/tmp/paceline") / (*m)->cluster_id() / "agent";
    std::cout << "note: " << config->data_dir
              << " is not reachable by the task user; the local agent keeps its work dir in "
              << work_dir.string() << std::endl;
    std::error_code ec;
    std::filesystem::create_directories(work_dir.parent_path(), ec);
    std::filesystem::permissions("/var/tmp/paceline",
                                 std::filesystem::perms::owner_all |
                                     std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_exec,
                                 ec);
    std::filesystem::permissions(work_dir.parent_path(),
                                 std::filesystem::perms::owner_all |
                                     std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_exec,
                                 ec);
  }
  absl::StatusOr<agentd::AgentDaemonConfig> agent_config = AgentConfigOf(local, work_dir.string());
  if (!agent_config.ok()) return settings.Locate(agent_config.status());
  absl::StatusOr<std::string> token =
      masterd::LoadOrCreateToken((*m)->endpoints().agent_token_file);
  if (!token.ok()) return token.status();
  if (const std::string& ca = (*m)->endpoints().ca_file; !ca.empty()) {
    // The local agent's certificate, made with the cluster's CA next to it.
    const std::filesystem::path tls_dir = std::filesystem::path(ca).parent_path();
    absl::StatusOr<tls::CertificateFiles> cert = tls::IssueAgentCertificate(
        tls_dir.string(), agent_config->agent.name, (tls_dir / "agents").string());
    if (!cert.ok()) return cert.status();
    RETURN_IF_ERROR(ReadAgentTls({cert->ca, cert->cert, cert->key, ""}, *agent_config));
  }
  agent_config->token = *token;
  agentd::AgentDaemon daemon(*agent_config);
  absl::Status agent_result;
  std::thread agent_thread([&] { agent_result = daemon.Run(); });
  std::cout << "paceline up " << Version() << " (commit " << Commit() << ")\n"
            << "  store:  " << config->data_dir << "\n"
            << "  gRPC:   " << (*m)->endpoints().grpc << "\n"
            << "  HTTP:   " << HttpUrl((*m)->endpoints()) << "/healthz\n"
            << "  token:  " << (*m)->endpoints().token_file << "\n"
            << "  agent:  " << agent_config->agent.name << " (work dir "
            << agent_config->agent.work_dir << ")\n"
            << "Ctrl-C stops it." << std::endl;
  WaitForStopSignal(stop_signals);
  daemon.Stop();
  agent_thread.join();
  (*m)->Shutdown();
  std::cout << "stopped" << std::endl;
  if (!agent_result.ok()) return WithContext(agent_result, "local agent");
  return absl::OkStatus();
}

}  // namespace

void RegisterDaemonCommands(CLI::App& app, CommandContext& ctx) {
  // Each daemon's flags, its config file (daemon_flags.h) and the settings that join them.
  static MasterFlags master_flags;
  static DaemonSettings master_settings("paceline master");
  static ConfigFlags master_config;
  CLI::App* master = app.add_subcommand("master", "run the master (store, API, scheduler)");
  AddMasterFlags(master, master_flags, master_settings);
  AddConfigFlags(master, master_config, "/etc/paceline/master.yaml");
  master->callback([&ctx, master] {
    absl::Status s = LoadDaemonConfig(*master, master_config, master_settings);
    if (s.ok()) s = RunMaster(master_flags, master_settings, master_config.print);
    if (!s.ok()) ctx.Fail(s);
  });

  static MasterFlags up_master;
  static AgentFlags up_agent;
  static DaemonSettings up_settings("paceline up");
  static ConfigFlags up_config;
  CLI::App* up = app.add_subcommand("up", "run an all-in-one cluster: master + local agent");
  AddMasterFlags(up, up_master, up_settings);
  AddAgentFlags(up, up_agent, /*with_master=*/false, up_settings);
  AddConfigFlags(up, up_config, "");
  up->callback([&ctx, up] {
    absl::Status s = LoadDaemonConfig(*up, up_config, up_settings);
    if (s.ok()) s = RunUp(up_master, up_agent, up_settings, up_config.print);
    if (!s.ok()) ctx.Fail(s);
  });

  static AgentFlags agent_flags;
  static DaemonSettings agent_settings("paceline agent");
  static ConfigFlags agent_config;
  CLI::App* agent = app.add_subcommand("agent", "run a host agent (runs tasks on this host)");
  AddAgentFlags(agent, agent_flags, /*with_master=*/true, agent_settings);
  AddConfigFlags(agent, agent_config, "/etc/paceline/agent.yaml");
  RegisterJoinCommand(agent, ctx);
  agent->callback([&ctx, agent] {
    // `agent join` or `agent renew` ran instead.
    if (agent->get_subcommand("join")->parsed() || agent->get_subcommand("renew")->parsed()) {
      return;
    }
    absl::Status s = LoadDaemonConfig(*agent, agent_config, agent_settings);
    if (s.ok()) s = RunAgent(agent_flags, agent_settings, agent_config.print);
    if (!s.ok()) ctx.Fail(s);
  });

  // On the master's machine, where the cluster's CA is.
  CLI::App* cert = AddGroup(app, "cert", "the cluster's TLS certificates");
  static CertFlags agent_cert, client_cert;
  AddCertCommand(cert, ctx, agent_cert, "agent",
                 "make an agent's certificate with the cluster's CA (on the master's machine)",
                 "the host name the agent registers as (--name)", "agents",
                 [](const std::string& host, const tls::CertificateFiles& files) {
                   return absl::StrCat("start the agent with --name ", host, " --ca ", files.ca,
                                       " --cert ", files.cert, " --key ", files.key);
                 });
  AddCertCommand(cert, ctx, client_cert, "client",
                 "make a client certificate with the cluster's CA, e.g. for Prometheus to scrape "
                 "masters' and agents' /metrics (on the master's machine)",
                 "its common name (masters' and agents' --metrics-client)", "clients",
                 [](const std::string& name, const tls::CertificateFiles&) {
                   return absl::StrCat(
                       "masters and agents serve it on --metrics-listen with "
                       "--metrics-client ",
                       name, " (the default is prometheus)");
                 });
}

}  // namespace paceline::cli
