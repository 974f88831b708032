// The daemons' flags and their config file (see daemon_flags.h).

#include "main/daemon_flags.h"

#include <cstdlib>

#include "CLI/CLI.hpp"

namespace paceline::cli {
namespace {

// A flag that takes a value, bound to `var` and to the config key of its long name.
template <typename T>
CLI::Option* Opt(CLI::App* cmd, DaemonSettings& s, const std::string& name, T& var,
                 const std::string& help) {
  CLI::Option* o = cmd->add_option(name, var, help);
  s.Bind(name.substr(2), &var);
  return o;
}

// A switch (no value on the command line; true or false in the file).
CLI::Option* Switch(CLI::App* cmd, DaemonSettings& s, const std::string& name, bool& var,
                    const std::string& help) {
  CLI::Option* o = cmd->add_flag(name, var, help);
  s.Bind(name.substr(2), &var);
  return o;
}

}  // namespace

void AddMasterFlags(CLI::App* cmd, MasterFlags& f, DaemonSettings& s) {
  Opt(cmd, s, "--data-dir", f.data_dir,
      "the master's directory: embedded store, token, master.json")
      ->capture_default_str();
  Opt(cmd, s, "--store", f.store,
      "cluster state: sqlite:DIR or postgres://USER@HOST:PORT/DATABASE "
      "(default: SQLite in DATA_DIR)")
      ->envname("PACELINE_STORE");
  Opt(cmd, s, "--listen", f.listen, "gRPC API address (port 0: any free port)")
      ->capture_default_str();
  Opt(cmd, s, "--http-listen", f.http_listen, "HTTP address for /healthz, /metrics, web UI")
      ->capture_default_str();
  Opt(cmd, s, "--dns-listen", f.dns_listen,
      "serve DNS for services on this address, UDP and TCP (port 0: any free port; "
      "default: no DNS server)");
  Opt(cmd, s, "--metrics-listen", f.metrics_listen,
      "also serve GET /metrics on HOST:PORT over mutual TLS: HTTPS with the master's "
      "certificate to clients with a certificate of the cluster's CA named by "
      "--metrics-client (plain HTTP on loopback with --insecure-loopback; \"\": not served)");
  Opt(cmd, s, "--metrics-client", f.metrics_clients,
      "the common name a --metrics-listen client's certificate must have (repeatable; "
      "`paceline cert client NAME`)")
      ->capture_default_str();
  Opt(cmd, s, "--dns-domain", f.dns_domain,
      "the cluster's DNS domain: services are NAME.POOL...DOMAIN")
      ->capture_default_str();
  Opt(cmd, s, "--dns-rate-limit", f.dns_rate_limit,
      "DNS queries a second per source address, a burst of twice that (0: none)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  Opt(cmd, s, "--token-file", f.token_file,
      "the bootstrap admin token's file (default: DATA_DIR/token, created when "
      "missing)");
  Opt(cmd, s, "--agent-token-file", f.agent_token_file,
      "the agents' bootstrap token's file (default: DATA_DIR/agent-token, created "
      "when missing)");
  Opt(cmd, s, "--secrets-key-file", f.secrets_key_file,
      "the keys that seal secrets at rest (default: DATA_DIR/secrets.key, created "
      "when missing); every master of a cluster needs the same file");
  Opt(cmd, s, "--tls-dir", f.tls_dir,
      "the cluster's CA and the master's certificate (default: DATA_DIR/tls, made "
      "when missing)");
  Switch(cmd, s, "--insecure-loopback", f.insecure_loopback,
         "serve plain text instead of TLS; only on loopback addresses");
  Switch(cmd, s, "--no-backfill", f.no_backfill,
         "admit each lane strictly in order: no job starts ahead of a waiting gang, even "
         "one whose max_running_time ends before the gang can start");
  Opt(cmd, s, "--placement", f.placement,
      "the placement profile: default, spread, best-fit, random-fit, dot-product, gpu-packing "
      "or fgd (docs/placement.md)")
      ->capture_default_str();
  Opt(cmd, s, "--placement-candidates", f.placement_candidates,
      "feasible hosts scored per placement: all, N (the first N of the profile's walk) or "
      "profile (its own: 16, or 256 once tasks ask GPUs)")
      ->capture_default_str();
  Opt(cmd, s, "--audit-retention", f.audit_retention,
      "delete audit records and usage older than this (0: keep them forever)")
      ->capture_default_str();
  Opt(cmd, s, "--host-cert-validity", f.host_cert_validity,
      "how long a certificate signed for a joining or renewing host is valid; its agent "
      "renews it after two thirds")
      ->capture_default_str();
  Opt(cmd, s, "--task-credential-ttl", f.task_credential_ttl,
      "how long a task's credential is valid; renewed at a third of it "
      "(docs/security.md)")
      ->capture_default_str();
  Opt(cmd, s, "--retain-terminal", f.retain_terminal,
      "archive finished jobs this long after they end and remove them from the "
      "store (forever: keep them; a pool's retain_terminal overrides it)")
      ->capture_default_str();
  Opt(cmd, s, "--archive-dir", f.archive_dir,
      "where archived jobs go, as gzip'd JSON lines per day (default: "
      "DATA_DIR/archive)");
  Opt(cmd, s, "--retention-period", f.retention_period,
      "how often to look for jobs to archive when there is no backlog")
      ->capture_default_str();
  Opt(cmd, s, "--host-timeout", f.host_timeout, "a host silent this long is LOST")
      ->capture_default_str();
  Opt(cmd, s, "--heartbeat-interval", f.heartbeat_interval,
      "how often agents are asked to heartbeat (below --host-timeout)")
      ->capture_default_str();
  Opt(cmd, s, "--cycle", f.cycle, "scheduling cycle period")->capture_default_str();
  Opt(cmd, s, "--history-period", f.history_period,
      "one point of the cluster's and pools' history for the UI (an hour is kept)")
      ->capture_default_str();
  Opt(cmd, s, "--lease", f.lease,
      "several masters on PostgreSQL: the leader's lease; a standby takes over this "
      "long after the leader died")
      ->capture_default_str();
  Opt(cmd, s, "--standby-read-bound", f.standby_read_bound,
      "several masters: a standby answers reads from its copy of the store while that copy is "
      "at most this old, and refuses them past it (0s: standbys answer no reads)")
      ->capture_default_str();
  Opt(cmd, s, "--advertise", f.advertise,
      "the gRPC address other masters send clients and agents to (default: the "
      "--listen address)");
}

void AddAgentFlags(CLI::App* cmd, AgentFlags& f, bool with_master, DaemonSettings& s) {
  if (with_master) {
    Opt(cmd, s, "--master", f.master,
        "master gRPC address HOST:PORT, or several (comma-separated) for several "
        "masters; required, here or in the config file");
    Opt(cmd, s, "--token-file", f.token_file,
        "file holding the agent's token (the master's DATA_DIR/agent-token, or one "
        "from `paceline token create --role agent`)");
    Opt(cmd, s, "--ca", f.ca,
        "the cluster's CA (the master's DATA_DIR/tls/ca.pem): speak TLS to the "
        "master; without it, plain text");
    Opt(cmd, s, "--cert", f.cert, "this agent's certificate (`paceline cert agent HOST`)");
    Opt(cmd, s, "--key", f.key, "its key");
    Opt(cmd, s, "--cert-check", f.cert_check,
        "a joined host (--token-file from `paceline agent join`): how often to check whether "
        "the certificate is due (two thirds of its validity passed) and renew it; 0: never")
        ->capture_default_str();
    Opt(cmd, s, "--metrics-listen", f.metrics_listen,
        "serve GET /metrics on HOST:PORT: HTTPS with this agent's certificate to clients with a "
        "certificate of the cluster's CA (mutual TLS); plain HTTP on loopback without TLS; "
        "\"\": not served");
    Opt(cmd, s, "--metrics-client", f.metrics_clients,
        "the common name a /metrics client's certificate must have (repeatable; "
        "`paceline cert client NAME`)")
        ->capture_default_str();
  }
  Opt(cmd, s, "--name", f.name, "host name the master knows this agent by (default: hostname)");
  Opt(cmd, s, "--work-dir", f.work_dir, "agent state: checkpoint, sandboxes, volumes");
  Opt(cmd, s, "--label", f.labels, "host label KEY=VALUE (repeatable)");
  Opt(cmd, s, "--cpu", f.cpu, "offer this many cores instead of the detected ones");
  Opt(cmd, s, "--memory", f.memory, "offer this much memory instead of the detected amount");
  Opt(cmd, s, "--disk", f.disk, "offer this much disk instead of the detected amount");
  Opt(cmd, s, "--reserve-cpu", f.reserve_cpu, "cores kept for the system")->capture_default_str();
  Opt(cmd, s, "--reserve-memory", f.reserve_memory, "memory kept for the system")
      ->capture_default_str();
  Opt(cmd, s, "--ports", f.ports, "dynamic port range FIRST-LAST")->capture_default_str();
  Opt(cmd, s, "--task-user", f.task_user, "run tasks as this user when the agent is root")
      ->capture_default_str();
  Opt(cmd, s, "--cgroup", f.cgroup, "isolation: auto, v2, v1 or none")
      ->check(CLI::IsMember({"auto", "v2", "v1", "none"}))
      ->capture_default_str();
  Opt(cmd, s, "--cgroup-parent", f.cgroup_parent,
      "the agent's cgroups go under this cgroup (relative to the cgroup root; v2: "
      "it must exist); default: the root");
  Opt(cmd, s, "--address", f.address,
      "this host's IP address: every task's PACELINE_HOST_ADDRESS, and the host's address "
      "in host list and to its gang peers");
  Opt(cmd, s, "--usage-interval", f.usage_interval,
      "how often the agent reports the cpu and memory its tasks and the host use")
      ->capture_default_str();
  Opt(cmd, s, "--container-runtime", f.container_runtime,
      "the OCI runtime for tasks with task.container (\"\": no containers here)")
      ->capture_default_str();
  Opt(cmd, s, "--cdi-dir", f.cdi_dirs,
      "a directory of CDI specs that give containers their GPUs (repeatable, lowest priority "
      "first)")
      ->capture_default_str();
  Opt(cmd, s, "--nvml-library", f.nvml_library,
      "NVML, loaded to discover the GPUs (MIG instances too) and watch their health; not "
      "loadable: nvidia-smi (\"\": do not use NVML)")
      ->capture_default_str();
  Opt(cmd, s, "--image-dir", f.image_dir, "the image cache (default: WORK_DIR/images)");
  Opt(cmd, s, "--image-cache", f.image_cache,
      "the image cache's size; beyond it, unused images go, least recently used first")
      ->capture_default_str();
  Opt(cmd, s, "--registry-ca", f.registry_ca,
      "a PEM file of CAs to trust for registries, besides the system's");
  Opt(cmd, s, "--registry-timeout", f.registry_timeout,
      "a pull fails when the registry sends nothing for this long")
      ->capture_default_str();
  Opt(cmd, s, "--container-host-path", f.container_host_paths,
      "a host directory containers may mount (repeatable)");
}

void AddConfigFlags(CLI::App* cmd, ConfigFlags& f, const std::string& packaged_path) {
  std::string help =
      "read settings from this YAML file (keys: the flags' names, e.g. data-dir; flags "
      "override it; docs/operations.md)";
  if (!packaged_path.empty()) help += "; the packaged service passes " + packaged_path;
  cmd->add_option("--config", f.config, help);
  cmd->add_flag("--print-config", f.print,
                "print the effective configuration, each value with where it came from, and "
                "exit without starting");
}

absl::Status LoadDaemonConfig(const CLI::App& cmd, const ConfigFlags& flags,
                              DaemonSettings& settings) {
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_lnames().empty() || opt->count() == 0) continue;
    const std::string& key = opt->get_lnames().front();
    if (!settings.Has(key)) continue;
    // CLI11 reads an option's environment variable only when the flag is absent.
    const std::string env = opt->get_envname();
    const char* env_value = env.empty() ? nullptr : std::getenv(env.c_str());
    const bool from_env =
        env_value != nullptr && opt->results().size() == 1 && opt->results().front() == env_value;
    settings.SetFromCommandLine(key, from_env ? env : "");
  }
  if (flags.config.empty()) return absl::OkStatus();
  return settings.ApplyFileAt(flags.config);
}

}  // namespace paceline::cli
