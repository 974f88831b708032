#pragma once
// MemoryStore: a Store kept in process memory, for tests and `paceline sim`. Same contract as
// every backend (the conformance suite runs against it); nothing survives the process.
//
// Thread-safety: not thread-safe (like every Store).

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "store/store.h"

namespace paceline::store {

class MemoryStore final : public Store {
 public:
  absl::Status CommitAll(const std::vector<const records::WriteBatch*>& batches) override;
  absl::StatusOr<records::StoreContents> Load() override;
  absl::StatusOr<std::vector<records::TaskEvent>> ListEvents(TaskId task, size_t limit) override;
  absl::Status ForEachEvent(const EventFn& fn) override;
  absl::StatusOr<std::optional<records::JobHistory>> ReadJob(JobId job) override;
  absl::StatusOr<StoreStats> Stats() override;
  absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) override;
  absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) override;
  std::string Describe() const override { return "memory"; }
  const std::string& cluster_id() const override { return state_.cluster_id; }

 private:
  struct State {
    std::map<std::string, records::PoolRecord> pools;
    std::map<JobId, records::JobRecord> jobs;
    std::map<TaskId, records::TaskRecord> tasks;
    std::map<TaskId, std::vector<records::TaskEvent>> events;
    std::map<std::string, records::HostRecord> hosts;
    std::map<std::string, records::TokenRecord> tokens;
    std::map<std::string, records::SecretRecord> secrets;  // by path
    std::map<int64_t, records::AuditRecord> audit;         // by seq
    int64_t last_audit_seq = 0;
    // Usage by key (records/usage.h): hour, pool, job, owner, user.
    std::map<std::tuple<absl::Time, std::string, JobId, std::string, std::string>,
             records::UsageRecord>
        usage;
    uint64_t next_job_id = 1;
    std::string cluster_id = "memory";
  };
  static void Apply(const records::WriteBatch& b, State& s);
  State state_;
};

}  // namespace paceline::store
