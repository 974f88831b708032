#pragma once
// AgentMetrics: the agent's own GET /metrics (docs/operations.md "Monitoring"), for Prometheus
// to scrape every agent as well as the masters.
//
// With TLS (the agent's --ca, --cert and --key) it is HTTPS with the agent's certificate, and
// mutual: a client presents a certificate of the cluster's CA whose common name is one of
// `clients` (`paceline cert client prometheus`), or is refused (no certificate: the handshake
// fails; another name: 403). Without TLS (a master on --insecure-loopback) it is plain HTTP,
// on a loopback address only.
//
// What it shows is a snapshot the agent loop publishes (Publish, about once a second), and the
// work directory's file system, read at each scrape:
//   paceline_agent_info{host,version,commit,isolation}   1
//   paceline_agent_connected                             1 while a master holds its stream
//   paceline_agent_runs{state}                           its runs by state
//   paceline_agent_unacknowledged_updates                status updates the master has not
//                                                        acknowledged yet (they wait on disk)
//   paceline_agent_image_cache_bytes                     the image cache's size
//   paceline_agent_filesystem_size_bytes,
//   paceline_agent_filesystem_avail_bytes                the work dir's file system (statvfs:
//                                                        what unprivileged writers may use)
//
// Thread-safety: Publish from any thread (the loop); scrapes run on the HTTP server's workers.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/task_runtime.h"
#include "common/net.h"
#include "http/http_server.h"

namespace paceline::agentd {

struct AgentMetricsOptions {
  HostPort listen;
  std::optional<http::HttpTls> tls;  // with client_ca_file: the cluster's CA
  std::vector<std::string> clients = {"prometheus"};
  // paceline_agent_info's labels, and the directory whose file system is shown.
  std::string host, version, commit, isolation, work_dir;
};

// What the loop publishes.
struct AgentSnapshot {
  bool connected = false;
  std::map<std::string, int> runs;  // by state name: starting, running, stopping, ending
  int64_t unacknowledged_updates = 0;
  int64_t image_cache_bytes = 0;
};

// The work directory's file system, in bytes.
struct FilesystemSize {
  int64_t size = 0;
  int64_t avail = 0;
};

// What `runtime` has now (on the loop's thread).
AgentSnapshot SnapshotOf(agent::TaskRuntime& runtime, bool connected);

// The exposition text (pure).
std::string RenderAgentMetrics(const AgentMetricsOptions& options, const AgentSnapshot& snapshot,
                               const std::optional<FilesystemSize>& filesystem);

class AgentMetrics {
 public:
  // Binds and serves; INVALID_ARGUMENT for plain text on a non-loopback address or TLS files
  // that do not load, UNAVAILABLE when the address is taken.
  static absl::StatusOr<std::unique_ptr<AgentMetrics>> Start(AgentMetricsOptions options);
  // Serves again on the same address with the same options, the TLS files read again (a
  // renewed certificate); the last snapshot is kept.
  static absl::StatusOr<std::unique_ptr<AgentMetrics>> Restart(std::unique_ptr<AgentMetrics> old);
  ~AgentMetrics();

  // The address bound (the port chosen for port 0).
  const HostPort& bound() const { return bound_; }
  void Publish(AgentSnapshot snapshot);

 private:
  explicit AgentMetrics(AgentMetricsOptions options) : options_(std::move(options)) {}
  const AgentMetricsOptions options_;
  HostPort bound_;
  absl::Mutex mu_;
  AgentSnapshot snapshot_ ABSL_GUARDED_BY(mu_);
  http::HttpServer server_{http::HttpLimits{.max_connections = 64,
                                            .max_connections_per_address = 16,
                                            .max_tls_handshakes = 16,
                                            .max_tls_handshakes_per_address = 4,
                                            .workers = 2,
                                            .max_queued = 16}};
};

}  // namespace paceline::agentd
