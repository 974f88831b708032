#pragma once
// The SQLite schema of the store: version 1, then the migrations to each later version. Times are
// microseconds since the Unix epoch (NULL for "never"); resources are integers in base units (see
// common/resources.h).

namespace paceline::store {

inline constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS pools (
  path TEXT PRIMARY KEY,
  spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY,
  pool TEXT NOT NULL,
  spec TEXT NOT NULL,
  version INTEGER NOT NULL,
  goal INTEGER NOT NULL,
  created_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
  job INTEGER NOT NULL,
  instance INTEGER NOT NULL,
  run INTEGER NOT NULL,
  state INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_us INTEGER,
  finished_us INTEGER,
  exit_code INTEGER NOT NULL,
  signal INTEGER NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL,
  failures INTEGER NOT NULL,
  not_before_us INTEGER,
  PRIMARY KEY (job, instance)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY,
  job INTEGER NOT NULL,
  instance INTEGER NOT NULL,
  run INTEGER NOT NULL,
  at_us INTEGER NOT NULL,
  state INTEGER NOT NULL,
  host TEXT NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_task ON events (job, instance, seq);
CREATE TABLE IF NOT EXISTS hosts (
  name TEXT PRIMARY KEY,
  maintenance INTEGER NOT NULL,
  cpu_milli INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  disk_bytes INTEGER NOT NULL,
  gpu_milli INTEGER NOT NULL,
  labels TEXT NOT NULL
);
)sql";

// Version 2: a user's restart of a live instance survives a master restart.
inline constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE tasks ADD COLUMN restart_requested INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 3: spec versions per run, earlier job versions and rolling updates (row_codec.h),
// the host of a stateful instance's volume.
inline constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE tasks ADD COLUMN spec_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN next_spec_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN volume_host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN old_specs TEXT NOT NULL DEFAULT '{}';
ALTER TABLE jobs ADD COLUMN updates TEXT NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN instances INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 4: who submitted each job; API tokens (never deleted: a revoked one keeps its row, and
// NULL expires_us or revoked_us is "never"); the audit log, numbered by seq (AUTOINCREMENT: a
// seq is never given twice, even once the newest records were pruned). The user and group
// columns are user_name and group_name: GROUP is an SQL keyword, and USER is one in PostgreSQL.
inline constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN owner_group TEXT NOT NULL DEFAULT '';
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  user_name TEXT NOT NULL,
  group_name TEXT NOT NULL,
  role TEXT NOT NULL,
  scope TEXT NOT NULL,
  salt TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_us INTEGER,
  expires_us INTEGER,
  revoked_us INTEGER
);
CREATE TABLE audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_us INTEGER NOT NULL,
  user_name TEXT NOT NULL,
  source TEXT NOT NULL,
  action TEXT NOT NULL,
  pool TEXT NOT NULL,
  target TEXT NOT NULL,
  outcome TEXT NOT NULL,
  message TEXT NOT NULL,
  request_id TEXT NOT NULL
);
CREATE INDEX audit_by_user ON audit (user_name, seq);
CREATE INDEX audit_by_time ON audit (at_us);
)sql";

// Version 5: the secrets of pools, by path, sealed (records.h): `sealed` is the hex of nonce,
// ciphertext and tag, never the clear value. Unlike tokens, a secret's row is deleted with it.
inline constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE secrets (
  path TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  sealed TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_us INTEGER,
  updated_us INTEGER
);
)sql";

// Version 6: task events in blocks (store/event_block.h): one row per job per commit holding
// that commit's events of the job, in order, instead of a row and an index entry per event. The
// migration (sqlite_store_events.cc) moves each job's events of the `events` table into one block.
inline constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE event_blocks (
  seq INTEGER PRIMARY KEY,
  job INTEGER NOT NULL,
  count INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX event_blocks_by_job ON event_blocks (job, seq);
)sql";

// Version 7: a task's row is its key and one blob (store/task_row.h) instead of seventeen
// columns: a restart reads three columns per task. The migration (task_rows.cc) writes each row
// of `tasks` into `task_rows`, drops `tasks` and renames `task_rows` to `tasks`.
inline constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE task_rows (
  job INTEGER NOT NULL,
  instance INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (job, instance)
) WITHOUT ROWID;
)sql";

// Version 8: a host's address as its agent registered from (records.h HostRecord::address), so
// that a standby or a restarted master can answer DNS for its instances. (A task's health,
// readiness and ports are in its blob, store/task_row.h, and need no migration.)
inline constexpr const char* kSchemaV8 = R"sql(
ALTER TABLE hosts ADD COLUMN address TEXT NOT NULL DEFAULT '';
)sql";

// Version 9: usage accounting (records/usage.h, store/usage_sql.h): what runs held, summed by
// hour, pool, job, owner and user; a commit adds to a row's sums. Pruned by hour_us.
inline constexpr const char* kSchemaV9 = R"sql(
CREATE TABLE usage_hours (
  hour_us INTEGER NOT NULL,
  pool TEXT NOT NULL,
  job INTEGER NOT NULL,
  owner TEXT NOT NULL,
  user_name TEXT NOT NULL,
  job_name TEXT NOT NULL,
  cpu_milli_seconds INTEGER NOT NULL,
  memory_byte_seconds INTEGER NOT NULL,
  gpu_milli_seconds INTEGER NOT NULL,
  tasks INTEGER NOT NULL,
  PRIMARY KEY (hour_us, pool, job, owner, user_name)
) WITHOUT ROWID;
)sql";

}  // namespace paceline::store
