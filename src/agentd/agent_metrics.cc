#include "agentd/agent_metrics.h"

#include <sys/statvfs.h>

#include "absl/strings/str_cat.h"
#include "image/image_store.h"

namespace paceline::agentd {
namespace {

// A label value, escaped as the exposition format wants.
std::string Label(absl::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\n') {
      out += "\\n";
    } else {
      if (c == '\\' || c == '"') out += '\\';
      out += c;
    }
  }
  return out;
}

void Family(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

std::optional<FilesystemSize> FilesystemOf(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return FilesystemSize{static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize),
                        static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize)};
}

}  // namespace

std::string RenderAgentMetrics(const AgentMetricsOptions& o, const AgentSnapshot& s,
                               const std::optional<FilesystemSize>& fs) {
  std::string out;
  Family(out, "paceline_agent_info", "gauge",
         "1, with the agent's host name, version, commit and isolation.");
  absl::StrAppend(&out, "paceline_agent_info{host=\"", Label(o.host), "\",version=\"",
                  Label(o.version), "\",commit=\"", Label(o.commit), "\",isolation=\"",
                  Label(o.isolation), "\"} 1\n");
  Family(out, "paceline_agent_connected", "gauge",
         "1 while a master holds the agent's stream, 0 otherwise.");
  absl::StrAppend(&out, "paceline_agent_connected ", s.connected ? 1 : 0, "\n");
  Family(out, "paceline_agent_runs", "gauge", "The agent's task runs by state.");
  for (const char* state : {"starting", "running", "stopping", "ending"}) {
    auto it = s.runs.find(state);
    absl::StrAppend(&out, "paceline_agent_runs{state=\"", state, "\"} ",
                    it == s.runs.end() ? 0 : it->second, "\n");
  }
  Family(out, "paceline_agent_unacknowledged_updates", "gauge",
         "Task status updates the master has not acknowledged yet (kept on disk until it does).");
  absl::StrAppend(&out, "paceline_agent_unacknowledged_updates ", s.unacknowledged_updates, "\n");
  Family(out, "paceline_agent_image_cache_bytes", "gauge", "The size of the agent's image cache.");
  absl::StrAppend(&out, "paceline_agent_image_cache_bytes ", s.image_cache_bytes, "\n");
  if (fs.has_value()) {
    Family(out, "paceline_agent_filesystem_size_bytes", "gauge",
           "The size of the file system of the agent's work directory.");
    absl::StrAppend(&out, "paceline_agent_filesystem_size_bytes ", fs->size, "\n");
    Family(out, "paceline_agent_filesystem_avail_bytes", "gauge",
           "What is free on the file system of the agent's work directory, for unprivileged "
           "writers (statvfs f_bavail).");
    absl::StrAppend(&out, "paceline_agent_filesystem_avail_bytes ", fs->avail, "\n");
  }
  return out;
}

absl::StatusOr<std::unique_ptr<AgentMetrics>> AgentMetrics::Start(AgentMetricsOptions options) {
  if (!options.tls && !IsLoopback(options.listen.host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-listen: ", options.listen.ToString(),
        ": without TLS (--ca, --cert, --key) the agent serves /metrics on a loopback address "
        "only"));
  }
  std::unique_ptr<AgentMetrics> m(new AgentMetrics(std::move(options)));
  AgentMetrics* self = m.get();
  m->server_.Routes().Get(
      "/metrics", [self](const http::HttpRequest& req, http::HttpResponse& res) {
        if (self->options_.tls &&
            !http::AllowClientName(req, self->options_.clients, "--metrics-client", res)) {
          return;
        }
        AgentSnapshot snapshot;
        {
          absl::MutexLock lock(&self->mu_);
          snapshot = self->snapshot_;
        }
        res.set_content(
            RenderAgentMetrics(self->options_, snapshot, FilesystemOf(self->options_.work_dir)),
            "text/plain; version=0.0.4");
      });
  absl::StatusOr<HostPort> bound = m->server_.Start(m->options_.listen, m->options_.tls);
  if (!bound.ok()) return bound.status();
  m->bound_ = *bound;
  return m;
}

absl::StatusOr<std::unique_ptr<AgentMetrics>> AgentMetrics::Restart(
    std::unique_ptr<AgentMetrics> old) {
  AgentMetricsOptions options = old->options_;
  options.listen = old->bound_;
  AgentSnapshot snapshot;
  {
    absl::MutexLock lock(&old->mu_);
    snapshot = old->snapshot_;
  }
  old.reset();  // frees the port
  absl::StatusOr<std::unique_ptr<AgentMetrics>> fresh = Start(std::move(options));
  if (fresh.ok()) (*fresh)->Publish(std::move(snapshot));
  return fresh;
}

AgentSnapshot SnapshotOf(agent::TaskRuntime& runtime, bool connected) {
  AgentSnapshot s;
  s.connected = connected;
  for (const agent::RunStatus& r : runtime.ListRuns()) {
    switch (r.state) {
      case agent::RunState::kStarting:
        ++s.runs["starting"];
        break;
      case agent::RunState::kRunning:
        ++s.runs["running"];
        break;
      case agent::RunState::kStopping:
        ++s.runs["stopping"];
        break;
      case agent::RunState::kEnding:
        ++s.runs["ending"];
        break;
    }
  }
  s.unacknowledged_updates = static_cast<int64_t>(runtime.PendingEventCount());
  if (image::ImageStore* images = runtime.images()) {
    for (const image::CachedImage& img : images->List()) s.image_cache_bytes += img.size_bytes;
  }
  return s;
}

AgentMetrics::~AgentMetrics() { server_.Stop(); }

void AgentMetrics::Publish(AgentSnapshot snapshot) {
  absl::MutexLock lock(&mu_);
  snapshot_ = std::move(snapshot);
}

}  // namespace paceline::agentd
