#pragma once
// What the end-to-end tests on PostgreSQL share: a pool spec that fits their jobs, a task count
// by state from `job get`, a throw-away server (store/testing/postgres_server.h) and a batch
// job between run markers.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "store/testing/postgres_server.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {

inline constexpr const char* kPgPool = R"(
resources:
  cpu: {reservation: 4, limit: 16}
  memory: {reservation: 4Gi, limit: 16Gi}
)";

// The job's count of tasks in `state` (0 when none).
inline uint32_t TasksIn(const nlohmann::json& job, const std::string& state) {
  const nlohmann::json& counts = job["task_counts"];
  return counts.contains(state) ? counts[state].get<uint32_t>() : 0;
}

// A fresh server, or nullptr after failing the test with the reason.
inline std::unique_ptr<store::testing::PostgresServer> StartPostgres() {
  auto pg = store::testing::PostgresServer::Start();
  EXPECT_TRUE(pg.ok()) << pg.status();
  return pg.ok() ? std::move(*pg) : nullptr;
}

// A batch job of `instances` runs of `work` between run markers (cluster_fixture.h).
inline std::string MarkedJob(const std::string& name, int instances, const std::string& markers,
                             const std::string& work) {
  return absl::StrCat("name: ", name, "\ninstances: ", instances, "\ntask:\n  command: '",
                      MarkedCommand(work),
                      "'\n  resources: {cpu: 0.05, memory: 8Mi}\n  env: {MARKERS: ", markers,
                      "}\n  restart: {policy: on-failure, max_failures: 3}\n");
}

}  // namespace paceline::e2e
