#pragma once
// Records: the durable state of the cluster, in domain terms. The store persists these and
// nothing else; everything else the master knows (queues, entitlements, placements in flight)
// is rebuilt from them after a restart.
//
//   PoolRecord   one resource pool: its path and spec.
//   JobRecord    one job: id, pool, spec (shared by all its instances), spec version, goal.
//   TaskRecord   the current run of one instance. Instances that never ran have no record:
//                a 100,000-instance job costs one JobRecord until its tasks start.
//   TaskEvent    one state transition of one run, with its reason; append-only history.
//   HostRecord   a host that registered once, with its maintenance state.
//   UpdateRecord a rolling update of a job (kept inside its JobRecord, newest last).
//   TokenRecord  an API credential (access/token.h): who it acts as, its role, a salted hash.
//   AuditRecord  one audited request (a mutation or a refusal); append-only.
//   SecretRecord a secret of a pool, sealed (secrets/keyring.h): the store never holds it clear.
//   UsageRecord  what runs held in one hour, by pool, job, owner and user (usage.h); added to.
//
// WriteBatch groups changes that must be durable together; a Store commits a batch atomically.
// Inside one batch the changes apply in this order: put_pools, put_jobs, put_tasks, events,
// delete_tasks, put_hosts, delete_jobs, delete_pools, put_tokens, delete_secrets, put_secrets,
// audit, prune_audit_before, add_usage, prune_usage_before
// (a batch should not touch one key twice).
//
// Thread-safety: value types.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "common/task_state.h"
#include "records/usage.h"
#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline::records {

struct PoolRecord {
  std::string path;  // "/ads/training"
  PoolSpec spec;
  friend bool operator==(const PoolRecord&, const PoolRecord&) = default;
};

// What the user wants of the job as a whole.
enum class JobGoal : uint8_t { kRun = 0, kKill = 1 };

enum class UpdateState : uint8_t {
  kRollingForward = 0,
  kRollingBack = 1,
  kSucceeded = 2,
  kFailed = 3,      // failed and did not roll back
  kRolledBack = 4,  // failed, then rolled back to the version it started from
  kAborted = 5,
};
absl::string_view UpdateStateName(UpdateState s);
bool IsActive(UpdateState s);  // rolling forward or back

// How far one entry of an update's `instances` is.
enum class EntryProgress : uint8_t { kWaiting, kInFlight, kDone, kFailed };
// The store's one-letter code of each ('.', '>', 'D', 'F'), and back (nullopt for any other).
char EntryProgressCode(EntryProgress p);
std::optional<EntryProgress> EntryProgressFromCode(char c);
// The codes of a whole update's progress ("D>.."), for the store and for messages.
std::string ProgressCodes(const std::vector<EntryProgress>& progress);

struct UpdateRecord {
  uint64_t id = 0;  // per job: 1, 2, ...
  uint64_t from_version = 0;
  uint64_t to_version = 0;
  UpdateState state = UpdateState::kRollingForward;
  bool paused = false;
  UpdateSpec options;               // batch size, failures, rollback, in place, min healthy time
  std::vector<uint32_t> instances;  // the instances to change (add, update or remove), in order
  std::vector<EntryProgress> progress;  // one per entry of `instances`
  uint32_t from_instances = 0;          // the job's size before and after
  uint32_t to_instances = 0;
  absl::Time started_at = absl::UnixEpoch();
  absl::Time finished_at = absl::InfinitePast();
  std::string message;  // why it failed, rolled back or was aborted
  friend bool operator==(const UpdateRecord&, const UpdateRecord&) = default;
};

struct JobRecord {
  JobId id;
  std::string pool;
  JobSpec spec;
  uint64_t version = 1;  // grows with every spec change
  JobGoal goal = JobGoal::kRun;
  absl::Time created_at = absl::UnixEpoch();
  // Earlier versions still run by some instance or kept for `job rollback --to`.
  std::map<uint64_t, JobSpec> old_specs;
  std::vector<UpdateRecord> updates;  // the latest few, oldest first
  uint32_t instances = 0;   // the job's instances now; 0 = spec.instances (an update changes it)
  std::string owner;        // the user who submitted it (empty: submitted without authentication)
  std::string owner_group;  // that user's group when it submitted (may be empty)
  friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

struct TaskRecord {
  TaskId id;
  uint32_t run = 0;  // 1 for the first run; grows on every restart
  TaskState state = TaskState::kPending;
  std::string host;  // host name of the current run; empty before placement
  absl::Time started_at = absl::InfinitePast();   // when the current run started RUNNING
  absl::Time finished_at = absl::InfinitePast();  // when the current run ended
  int32_t exit_code = -1;                         // -1: none
  int32_t signal = 0;                             // 0: none
  std::string reason;                             // machine-readable, e.g. "EXIT_NONZERO"
  std::string message;                            // human-readable detail
  uint32_t failures = 0;                          // failed runs so far
  absl::Time not_before = absl::InfinitePast();   // backoff: earliest start of a PENDING run
  bool restart_requested = false;  // a user restart: a new run starts when this one ends
  uint64_t spec_version = 0;       // the job version the current run runs; 0 = the job's
  uint64_t next_spec_version = 0;  // an update's: the next run runs this version; 0 = none
  std::string volume_host;         // stateful: the host that holds the instance's volume
  // job.gang.restart: gang: the gang restarts before the current run (its rendezvous attempt).
  uint32_t gang_attempt = 0;
  // The current run's checks as its agent last reported them (a restarted or standby master
  // answers DNS and the endpoints from these): "" (no check or no live run), "UNKNOWN",
  // "HEALTHY"/"UNHEALTHY" and "READY"/"NOT_READY".
  std::string health;
  std::string readiness;
  // The current run's ports while it is LAUNCHING or RUNNING, in the order of its task's named
  // ports (a standby answers DNS SRV queries from these); empty otherwise.
  std::vector<uint16_t> ports;
  friend bool operator==(const TaskRecord&, const TaskRecord&) = default;
};

struct TaskEvent {
  RunId run;
  absl::Time at = absl::UnixEpoch();
  TaskState state = TaskState::kPending;  // the state entered
  std::string host;
  std::string reason;
  std::string message;
  friend bool operator==(const TaskEvent&, const TaskEvent&) = default;
};

enum class HostMaintenance : uint8_t { kUp = 0, kDraining = 1, kDrained = 2, kDown = 3 };
absl::string_view MaintenanceName(HostMaintenance m);  // "UP", "DRAINING", "DRAINED", "DOWN"

struct HostRecord {
  std::string name;
  HostMaintenance maintenance = HostMaintenance::kUp;
  Resources capacity;
  std::map<std::string, std::string> labels;
  std::string address;  // its agent's IP address as the master saw it when it last registered
  friend bool operator==(const HostRecord&, const HostRecord&) = default;
};

// An API credential. The secret is never kept: only `hash` = hex SHA-256 of (salt || secret),
// see access/token.h. Tokens are never deleted: a revoked token keeps its row (for the audit).
struct TokenRecord {
  std::string id;     // public part of the token, unique: the key
  std::string name;   // a label, e.g. "ci-deploy"
  std::string user;   // who it acts as ("alice", "svc-ci"; agents: the host name or "*")
  std::string group;  // the user's group; may be empty
  std::string role;   // "admin", "pool-admin", "submitter", "viewer", "agent"
  std::string scope;  // the pool subtree it applies to ("/" = all); agents: host name or "*"
  std::string salt;   // hex
  std::string hash;   // hex
  std::string created_by;
  absl::Time created_at = absl::UnixEpoch();
  absl::Time expires_at = absl::InfiniteFuture();  // InfiniteFuture: never
  absl::Time revoked_at = absl::InfiniteFuture();  // InfiniteFuture: not revoked
  friend bool operator==(const TokenRecord&, const TokenRecord&) = default;
};

// One audited request: every mutation, and every request refused for want of a credential or
// a permission. `seq` is given by the store when the record is written (growing, from 1).
struct AuditRecord {
  int64_t seq = 0;
  absl::Time at = absl::UnixEpoch();
  std::string user;        // "" when no valid credential was given
  std::string source;      // the client's address, e.g. "127.0.0.1:51234"
  std::string action;      // "JobService.KillJob", "GET /metrics"
  std::string pool;        // the pool the request was about ("" when none)
  std::string target;      // what it was about, e.g. "job 12"
  std::string outcome;     // "OK" or a status code name, e.g. "PERMISSION_DENIED"
  std::string message;     // the error message ("" when OK)
  std::string request_id;  // the request's id, as answered to the client
  friend bool operator==(const AuditRecord&, const AuditRecord&) = default;
};

// A secret of a pool, e.g. "/ads/db-password": its value sealed with AES-256-GCM under the key
// `key_id` of the master's keyring (secrets/keyring.h), bound to `path`. Never clear in a store.
struct SecretRecord {
  std::string path;    // "<pool>/<name>" ("/db-password" for the root pool): the key
  std::string key_id;  // which key of the keyring sealed it
  std::string sealed;  // hex: nonce || ciphertext || tag
  std::string created_by;
  absl::Time created_at = absl::UnixEpoch();
  absl::Time updated_at = absl::UnixEpoch();
  friend bool operator==(const SecretRecord&, const SecretRecord&) = default;
};

// One job as a store holds it: its record, its instances' records and every event of its
// runs (by instance, then in commit order): what the archive keeps of a job it retires.
struct JobHistory {
  JobRecord job;
  std::vector<TaskRecord> tasks;
  std::vector<TaskEvent> events;
};

// Which audit records to list: all of these conditions, newest first, at most `limit`.
struct AuditQuery {
  std::string user;                         // exactly this user; "" = any
  std::string pool;                         // this pool or below it; "" = any
  absl::Time since = absl::InfinitePast();  // at or after
  int64_t before_seq = 0;                   // only records with seq < before_seq; 0 = no bound
  size_t limit = 100;                       // > 0
};

struct WriteBatch {
  std::vector<PoolRecord> put_pools;
  std::vector<std::string> delete_pools;
  std::vector<JobRecord> put_jobs;
  std::vector<JobId> delete_jobs;  // also deletes the job's tasks and events
  std::vector<TaskRecord> put_tasks;
  std::vector<TaskId> delete_tasks;  // tasks whose records go (the core keeps a removed instance's)
  std::vector<TaskEvent> events;
  std::vector<HostRecord> put_hosts;
  std::vector<TokenRecord> put_tokens;      // insert or replace by id
  std::vector<std::string> delete_secrets;  // by path; absent paths are ignored
  std::vector<SecretRecord> put_secrets;    // insert or replace by path
  std::vector<AuditRecord> audit;           // appended; their `seq` is ignored (the store numbers)
  std::optional<absl::Time> prune_audit_before;  // deletes audit records older than this
  // Added to the stored sums of their key (usage.h); a key may come more than once.
  std::vector<UsageRecord> add_usage;
  std::optional<absl::Time> prune_usage_before;  // deletes usage of the hours before this
  std::optional<uint64_t> next_job_id;           // the id counter, when it moved
  std::optional<std::string> cluster_id;         // the cluster's id, adopted from another store

  bool empty() const;
  size_t size() const;  // number of changes
};

// Task records handed over in batches, as a streaming load reads them (store.h, LoadSink):
// calls `take` with each batch until there are no more, and returns take's first error or the
// source's own.
using TaskBatchFn = std::function<absl::Status(const std::vector<TaskRecord>&)>;
using TaskBatches = std::function<absl::Status(const TaskBatchFn& take)>;

// Everything a master needs to rebuild its state (events are read on demand).
struct StoreContents {
  std::vector<PoolRecord> pools;
  std::vector<JobRecord> jobs;
  std::vector<TaskRecord> tasks;
  std::vector<HostRecord> hosts;
  std::vector<TokenRecord> tokens;    // by id (audit records are read on demand: ListAudit)
  std::vector<SecretRecord> secrets;  // by path
  uint64_t next_job_id = 1;
  std::string cluster_id;
};

}  // namespace paceline::records
