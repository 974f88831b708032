#pragma once
// One record of each kind, with every field set away from its default, whose rows the schema
// tests of both SQL backends write as the statements of the release before the tables were
// described wrote them (sqlite/sqlite_schema_test.cc, postgres/postgres_schema_test.cc).
//
// Thread-safety: a pure function.

#include "records/records.h"

namespace paceline::store::testing {

struct Golden {
  records::PoolRecord pool;
  records::JobRecord job;
  records::TaskRecord task;
  records::TaskEvent event;
  records::HostRecord host;
  records::TokenRecord token;
  records::SecretRecord secret;
  records::AuditRecord audit;
};

inline Golden MakeGolden() {
  Golden g;
  g.pool.path = "/ads";
  g.pool.spec.description = "ads";
  g.job.id = JobId(7);
  g.job.pool = "/ads";
  g.job.spec.name = "etl";
  g.job.spec.instances = 2;
  g.job.spec.task.command = "true";
  g.job.spec.task.resources = Resources::Of(100, int64_t{16} << 20);
  g.job.version = 3;
  g.job.goal = records::JobGoal::kKill;
  g.job.created_at = absl::FromUnixMicros(1'700'000'000'000'000);
  g.job.instances = 2;
  g.job.owner = "alice";
  g.job.owner_group = "ads-team";
  g.task.id = TaskId{JobId(7), 1};
  g.task.run = 2;
  g.task.state = TaskState::kRunning;
  g.task.host = "host-1";
  g.task.started_at = absl::FromUnixMicros(100);
  g.task.failures = 1;
  g.task.restart_requested = true;
  g.task.spec_version = 3;
  g.task.volume_host = "host-1";
  g.event.run = RunId{g.task.id, 2};
  g.event.at = absl::FromUnixMicros(100);
  g.event.state = TaskState::kRunning;
  g.event.host = "host-1";
  g.event.reason = "STARTED";
  g.host.name = "host-1";
  g.host.maintenance = records::HostMaintenance::kDraining;
  g.host.capacity = Resources::Of(4000, int64_t{8} << 30, int64_t{100} << 30, 2000);
  g.host.labels = {{"zone", "a"}};
  g.token = {"tok-1",
             "ci",
             "alice",
             "ads-team",
             "submitter",
             "/ads",
             "00ff",
             "beef",
             "root",
             absl::FromUnixMicros(5),
             absl::InfiniteFuture(),
             absl::FromUnixMicros(9)};
  g.secret = {"/ads/db", "k1", "00aa", "alice", absl::FromUnixMicros(10), absl::FromUnixMicros(20)};
  g.audit = {1,
             absl::FromUnixMicros(30),
             "alice",
             "127.0.0.1:1",
             "JobService.KillJob",
             "/ads",
             "job 7",
             "OK",
             "",
             "req-1"};
  return g;
}

}  // namespace paceline::store::testing
