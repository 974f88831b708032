#include "api/http_routes.h"

#include <nlohmann/json.hpp>

#include "api/metrics.h"
#include "common/version.h"

namespace paceline::api {

void AddHealthRoutes(http::HttpServer& server, const MasterFacts& facts) {
  server.Routes().Get("/healthz", [facts](const http::HttpRequest&, http::HttpResponse& res) {
    nlohmann::json body = {
        {"status", "ok"},
        {"version", std::string(Version())},
        {"commit", std::string(Commit())},
        {"cluster_id", facts.cluster_id},
        {"store", facts.store},
        {"uptime_seconds", absl::ToInt64Seconds(absl::Now() - facts.started_at)},
    };
    MasterRole role = facts.role ? facts.role() : MasterRole{};
    body["role"] = role.role;
    body["term"] = role.term;
    body["leader"] = role.leader;
    body["lease_age_seconds"] = role.lease_age == absl::InfiniteDuration()
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json(absl::ToDoubleSeconds(role.lease_age));
    body["replication_lag_seconds"] =
        role.replication_lag == absl::InfiniteDuration()
            ? nlohmann::json(nullptr)
            : nlohmann::json(absl::ToDoubleSeconds(role.replication_lag));
    res.set_content(body.dump(), "application/json");
  });
}

void AddMetricsRoutes(http::HttpServer& server, Backend* cluster, const MasterFacts& facts) {
  server.Routes().Get(
      "/metrics", [cluster, facts](const http::HttpRequest&, http::HttpResponse& res) {
        MasterRole role = facts.role ? facts.role() : MasterRole{};
        std::string text = RenderRoleMetrics(role);
        if (facts.certificates) text += RenderCertificateMetrics(facts.certificates());
        if (role.role != "standby") {
          store::GroupCommitStats stats = cluster->CommitStats();
          DurationHistogram cycles = cluster->CycleTimes();
          text += cluster->Read<std::string>([&](const scheduler::SchedulerCore& core) {
            return RenderMetrics(core, stats, cycles);
          });
          if (facts.retention) text += RenderRetentionMetrics(facts.retention());
          if (facts.usage) text += RenderUsageMetrics(facts.usage());
        }
        res.set_content(text, "text/plain; version=0.0.4");
      });
}

}  // namespace paceline::api
