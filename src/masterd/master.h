#pragma once
// Master: the Paceline control-plane process — the store, the gRPC API and the HTTP side.
//
// Start() opens the store (config.store; by default SQLite under config.data_dir), starts the gRPC
// server and the HTTP server on their listen addresses (port 0 = any free port), and writes
// <data_dir>/master.json with the bound addresses and the pid, so that the CLI and tests can find a
// master started with port 0. Shutdown() stops both servers (in-flight requests finish) and removes
// master.json; it is idempotent and is also called by the destructor.
//
// Thread-safety: Start/Shutdown from one thread (the daemon's main thread).

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/defaults.h"
#include "common/endpoints.h"
#include "common/net.h"

namespace paceline::masterd {

class Cluster;

struct MasterConfig {
  std::string data_dir = defaults::kDataDir;  // master.json, the token; the SQLite store
  // Where the cluster state lives (store/open_store.h): empty for SQLite under data_dir.
  std::string store;
  HostPort grpc_listen{defaults::kListenHost, defaults::kGrpcPort};
  HostPort http_listen{defaults::kListenHost, defaults::kHttpPort};
  // The bootstrap tokens (docs/security.md): the admin's, and the one agents present. Empty:
  // <data_dir>/token and <data_dir>/agent-token, each created (random, mode 0600) when missing.
  // Further tokens are made with `paceline token create` and kept, hashed, in the store.
  std::string token_file;
  std::string agent_token_file;
  // The keys that seal secrets at rest (secrets/keyring.h). Empty: <data_dir>/secrets.key,
  // created (mode 0600) when missing. Every master of a cluster needs the same file.
  std::string secrets_key_file;
  // Transport security (masterd/master_tls.h): TLS with the certificates in `tls_dir` (empty:
  // <data_dir>/tls, made when missing), or plain text on loopback addresses only.
  std::string tls_dir;
  bool insecure_loopback = false;
  // Audit records, and usage accounting (usage_book.h), older than this are deleted (zero:
  // kept forever).
  absl::Duration audit_retention = absl::Hours(24 * 90);
  // Finished jobs older than this are archived and removed from the store (a pool's
  // retain_terminal overrides it; InfiniteDuration: kept forever), into `archive_dir` (empty:
  // <data_dir>/archive). See retention_worker.h.
  absl::Duration retain_terminal = absl::Hours(24 * 7);
  std::string archive_dir;
  absl::Duration retention_period = absl::Seconds(10);               // how often it looks when idle
  absl::Duration cycle = defaults::kCycle;                           // scheduling cycle
  absl::Duration heartbeat_interval = defaults::kHeartbeatInterval;  // asked of agents
  absl::Duration host_timeout = defaults::kHostTimeout;              // silent this long: LOST
  absl::Duration history_period = defaults::kHistoryPeriod;          // one point; an hour is kept
  std::string placement_profile = "default";
  // Feasible hosts scored per placement (EngineConfig::max_candidates); unset: the profile's.
  std::optional<uint32_t> placement_candidates;
  // EASY backfill in admission (docs/resource-manager.md "Backfill"); off: --no-backfill.
  bool backfill = true;
  // Several masters on one PostgreSQL store (masterd/leadership.h): how long the leader's lease
  // runs without renewal, and the gRPC address the others send clients and agents to (empty:
  // the bound listen address; set it when listening on 0.0.0.0).
  absl::Duration lease = defaults::kLease;
  // How old a standby's followed state may be for it to answer reads (zero: it answers none).
  absl::Duration standby_read_bound = defaults::kStandbyReadBound;
  std::string advertise;
  // How long a task's credential is valid (renewed at a third of it): masterd/task_credentials.h.
  absl::Duration task_credential_ttl = defaults::kTaskCredentialTtl;
  // How long a certificate signed for a joining or renewing host is valid (its agent renews it
  // after two thirds: agentd/certificate_renewal.h).
  absl::Duration host_cert_validity = defaults::kHostCertValidity;
  // DNS for services (masterd/service_dns.h): where it listens, UDP and TCP (an empty host: no
  // DNS server), and the cluster's domain (normalized, dns/names.h).
  HostPort dns_listen{"", 0};
  std::string dns_domain = "paceline";
  // /metrics on a listener of its own, for Prometheus (an empty host: none; the HTTP listener
  // serves /metrics to token holders either way): mutual TLS, to clients whose certificate of
  // the cluster's CA has one of `metrics_clients` as its common name (others get 403), or plain
  // HTTP on a loopback address with insecure_loopback.
  HostPort metrics_listen{"", 0};
  std::vector<std::string> metrics_clients = {"prometheus"};
  // Queries a second each source address may ask (a burst of twice as many); 0: no limit.
  double dns_rate_limit = 1000;
};

class Master {
 public:
  static absl::StatusOr<std::unique_ptr<Master>> Start(const MasterConfig& config);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  void Shutdown();
  const MasterEndpoints& endpoints() const { return endpoints_; }
  // The stable id of the cluster's store.
  const std::string& cluster_id() const;
  // Where the store is ("sqlite:data/paceline.db", "postgres://paceline@db:5432/paceline").
  std::string store_description() const;
  // The running state, for in-process tools that attach simulated agents through the agent
  // protocol code (`paceline bench scale`). Valid until Shutdown().
  Cluster* cluster();
  absl::Duration heartbeat_interval() const;
  // Returns the heap memory freed since the last time to the operating system (jemalloc's
  // purge of every arena; malloc_trim under glibc's malloc).
  // The master does it every 30 s on a thread of its own, so that its resident memory follows
  // what it holds after a burst (e.g. a million tasks launched: messages and batches freed).
  static void TrimMemory();

 private:
  struct Impl;
  explicit Master(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  MasterEndpoints endpoints_;
};

// Reads the token in `path`, or creates it (32 random hex bytes, mode 0600) when missing.
absl::StatusOr<std::string> LoadOrCreateToken(const std::string& path);

}  // namespace paceline::masterd
