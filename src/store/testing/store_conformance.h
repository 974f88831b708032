#pragma once
// The fixture of the Store conformance suite (store_conformance_test.cc, which instantiates it
// for every backend, store_access_conformance_test.cc and store_secret_conformance_test.cc): a
// fresh store of the backend under test per test, and records to write to it.
//
// Thread-safety: gtest's; tests of one suite run one at a time.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "records/records.h"
#include "store/store.h"

namespace paceline::store::conformance {

// A backend under test: `open` returns a store over the same durable location each time (for
// SQLite) so that reopening can be tested; memory stores are not durable.
struct Backend {
  std::string name;
  bool durable = false;
  std::function<std::unique_ptr<Store>(const std::string& dir)> open;
};

// Names the backend in test listings (not its bytes).
inline void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

inline JobSpec ValidJobSpec(const std::string& name, uint32_t instances) {
  JobSpec s;
  s.name = name;
  s.instances = instances;
  s.task.command = "echo hi";
  s.task.resources = Resources::Of(500, int64_t{256} << 20);
  return s;
}

inline PoolSpec ValidPoolSpec(int64_t cpu_reservation) {
  PoolSpec p;
  p.dim(Dim::kCpu).reservation = cpu_reservation;
  p.dim(Dim::kCpu).limit = cpu_reservation * 2;
  return p;
}

inline records::TaskRecord Task(uint64_t job, uint32_t instance, TaskState state) {
  records::TaskRecord t;
  t.id = TaskId{JobId(job), instance};
  t.run = 1;
  t.state = state;
  t.host = "host-1";
  t.started_at = absl::FromUnixSeconds(1000);
  t.not_before = absl::FromUnixSeconds(1500);
  t.restart_requested = true;
  t.exit_code = state == TaskState::kFailed ? 3 : -1;
  t.reason = state == TaskState::kFailed ? "EXIT_NONZERO" : "";
  return t;
}

inline records::TaskEvent Event(uint64_t job, uint32_t instance, uint32_t run, TaskState state,
                                int at) {
  return records::TaskEvent{RunId{TaskId{JobId(job), instance}, run},
                            absl::FromUnixSeconds(at),
                            state,
                            "host-1",
                            "REASON",
                            "message"};
}

// A token that expires (at 90,000 s) and is not revoked.
inline records::TokenRecord Token(const std::string& id, const std::string& user) {
  records::TokenRecord t;
  t.id = id;
  t.name = "ci-deploy";
  t.user = user;
  t.group = "ads-team";
  t.role = "submitter";
  t.scope = "/ads";
  t.salt = "5a17";
  t.hash = std::string(64, 'e');
  t.created_by = "root";
  t.created_at = absl::FromUnixMicros(900'000'123);
  t.expires_at = absl::FromUnixSeconds(90'000);
  return t;
}

// A secret of `path` sealed under `key_id`: `sealed` stands for the hex a keyring gives.
inline records::SecretRecord Secret(const std::string& path, const std::string& sealed,
                                    const std::string& key_id = "k1") {
  records::SecretRecord r;
  r.path = path;
  r.key_id = key_id;
  r.sealed = sealed;
  r.created_by = "alice";
  r.created_at = absl::FromUnixMicros(800'000'321);
  r.updated_at = absl::FromUnixMicros(850'000'654);
  return r;
}

// An audit record at `at` seconds; `target` tells records apart in listings. One without a user
// is a refusal (no credential).
inline records::AuditRecord Audit(int at, const std::string& user, const std::string& pool,
                                  const std::string& target) {
  records::AuditRecord a;
  a.at = absl::FromUnixSeconds(at);
  a.user = user;
  a.source = "127.0.0.1:51234";
  a.action = "JobService.KillJob";
  a.pool = pool;
  a.target = target;
  a.outcome = user.empty() ? "UNAUTHENTICATED" : "OK";
  a.message = user.empty() ? "no credential" : "";
  a.request_id = "req-" + target;
  return a;
}

class StoreConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    // A parameterized test's name is "Name/param": flattened, so that TearDown removes the
    // whole directory and not only its last part.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '-');
    dir_ = (std::filesystem::temp_directory_path() /
            ("pl-conf-" + std::to_string(::getpid()) + "-" + GetParam().name + "-" + test))
               .string();
    std::filesystem::remove_all(dir_);
    store_ = GetParam().open(dir_);
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  records::StoreContents MustLoad() {
    absl::StatusOr<records::StoreContents> c = store_->Load();
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : records::StoreContents{};
  }
  // A full batch touching every kind of record.
  records::WriteBatch FullBatch() {
    records::WriteBatch b;
    b.put_pools.push_back({"/ads", ValidPoolSpec(10'000)});
    records::JobRecord job{JobId(7),
                           "/ads",
                           ValidJobSpec("etl", 3),
                           2,
                           records::JobGoal::kRun,
                           absl::FromUnixSeconds(500)};
    job.old_specs[1] = ValidJobSpec("etl", 2);
    records::UpdateRecord u;
    u.id = 1;
    u.from_version = 1;
    u.to_version = 2;
    u.paused = true;
    u.options.batch_size = 2;
    u.options.min_healthy_time = absl::Seconds(3);
    u.instances = {0, 1, 2};
    u.progress = {records::EntryProgress::kDone, records::EntryProgress::kInFlight,
                  records::EntryProgress::kWaiting};
    u.from_instances = 2;
    u.to_instances = 3;
    u.started_at = absl::FromUnixSeconds(600);
    u.message = "paused by the user";
    job.updates.push_back(u);
    job.instances = 3;
    job.owner = "alice";
    job.owner_group = "ads-team";
    b.put_jobs.push_back(job);
    b.put_tasks.push_back(Task(7, 0, TaskState::kRunning));
    b.put_tasks.back().spec_version = 2;
    b.put_tasks.back().next_spec_version = 3;
    b.put_tasks.back().volume_host = "host-2";
    b.put_tasks.back().gang_attempt = 2;
    b.put_tasks.back().health = "HEALTHY";
    b.put_tasks.back().readiness = "NOT_READY";
    b.put_tasks.back().ports = {31000, 31001};
    b.put_tasks.push_back(Task(7, 2, TaskState::kFailed));
    b.events.push_back(Event(7, 0, 1, TaskState::kLaunching, 10));
    b.events.push_back(Event(7, 0, 1, TaskState::kRunning, 11));
    records::HostRecord h{"host-1",
                          records::HostMaintenance::kDraining,
                          Resources::Of(8000, int64_t{16} << 30),
                          {{"zone", "a"}, {"rack", "r1"}}};
    h.address = "198.18.0.7";
    b.put_hosts.push_back(h);
    b.put_tokens.push_back(Token("tok-1", "alice"));
    b.put_secrets.push_back(Secret("/ads/db-password", "00aa11bb22cc33dd"));
    b.audit.push_back(Audit(900, "alice", "/ads", "job 7"));
    b.next_job_id = 8;
    return b;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace paceline::store::conformance
