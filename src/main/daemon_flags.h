#pragma once
// The flags of the daemon commands (`paceline master`, `agent`, `up`), each also a key of the
// daemon's config file (daemon_config.h: the key is the flag's long name without the dashes),
// and the two flags that bring the file in: --config FILE and --print-config.
//
// Registration binds every flag both to its field of MasterFlags / AgentFlags (CLI11 fills it
// from the command line) and to the DaemonSettings; LoadDaemonConfig then, once CLI11 has
// parsed the command line, marks what the command line gave and fills the rest from the file.
// What the values mean is checked later by the command (daemon_commands.cc), the same way for a
// flag and for a key of the file.
//
// Thread-safety: the command line's thread.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/defaults.h"
#include "main/daemon_config.h"

namespace CLI {
class App;
}

namespace paceline::cli {

struct MasterFlags {
  std::string data_dir = defaults::kDataDir;
  std::string store;
  std::string listen = absl::StrCat(defaults::kListenHost, ":", defaults::kGrpcPort);
  std::string http_listen = absl::StrCat(defaults::kListenHost, ":", defaults::kHttpPort);
  std::string token_file;
  std::string agent_token_file;
  std::string secrets_key_file;
  std::string audit_retention = "90d";
  std::string task_credential_ttl = absl::FormatDuration(defaults::kTaskCredentialTtl);
  std::string host_cert_validity = absl::FormatDuration(defaults::kHostCertValidity);
  std::string retain_terminal = "7d";
  std::string archive_dir;
  std::string retention_period = "10s";
  std::string tls_dir;
  bool insecure_loopback = false;
  bool no_backfill = false;
  std::string placement = "default";
  std::string placement_candidates = "profile";
  std::string host_timeout = absl::FormatDuration(defaults::kHostTimeout);
  std::string heartbeat_interval = absl::FormatDuration(defaults::kHeartbeatInterval);
  std::string cycle = absl::FormatDuration(defaults::kCycle);
  std::string lease = absl::FormatDuration(defaults::kLease);
  std::string standby_read_bound = absl::FormatDuration(defaults::kStandbyReadBound);
  std::string history_period = absl::FormatDuration(defaults::kHistoryPeriod);
  std::string advertise;
  std::string dns_listen;
  std::string metrics_listen;
  std::vector<std::string> metrics_clients = {"prometheus"};
  std::string dns_domain = "paceline";
  double dns_rate_limit = 1000;
};

struct AgentFlags {
  std::string master;
  std::string token_file;
  std::string ca, cert, key;
  std::string cert_check = "1h";
  std::string metrics_listen;
  std::vector<std::string> metrics_clients = {"prometheus"};
  std::string name;
  std::string work_dir;
  std::vector<std::string> labels;
  std::string cpu, memory, disk;
  std::string reserve_cpu = "0", reserve_memory = "0";
  std::string ports = "31000-32999";
  std::string task_user = "nobody";
  std::string cgroup = "auto";
  std::string cgroup_parent;
  std::string address;
  std::string usage_interval = "5s";
  std::string container_runtime = "crun";
  std::vector<std::string> cdi_dirs = {"/etc/cdi", "/var/run/cdi"};
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string image_dir;
  std::string image_cache = "20Gi";
  std::string registry_ca;
  std::string registry_timeout = "30s";
  std::vector<std::string> container_host_paths;
};

// The master's flags on `cmd`, bound to `f` and to `settings` (which must outlive the parse).
void AddMasterFlags(CLI::App* cmd, MasterFlags& f, DaemonSettings& settings);
// The agent's flags; `with_master`: also --master, --token-file, --ca, --cert and --key (not
// for `up`, whose agent is local). --master is not required by CLI11: the file may give it.
void AddAgentFlags(CLI::App* cmd, AgentFlags& f, bool with_master, DaemonSettings& settings);

struct ConfigFlags {
  std::string config;  // --config FILE; empty: no file
  bool print = false;  // --print-config
};
// --config and --print-config on `cmd`; `packaged_path` is named in the help (the file the
// packaged units pass). No file is read unless --config names it.
void AddConfigFlags(CLI::App* cmd, ConfigFlags& f, const std::string& packaged_path);

// After CLI11 parsed `cmd`'s command line: marks in `settings` every bound flag the command
// line gave (or its environment variable), then, with --config, applies the file. An error
// (an unreadable file, a bad key or value) leaves the flags as the command line set them.
absl::Status LoadDaemonConfig(const CLI::App& cmd, const ConfigFlags& flags,
                              DaemonSettings& settings);

}  // namespace paceline::cli
