#pragma once
// The PostgreSQL schema of the store: version 1, then the migrations to each later version
// (applied in order at start, in one transaction, under an advisory lock so that masters
// starting together migrate once). Same tables and units as the SQLite schema: times are
// microseconds since the Unix epoch (NULL for "never"), resources integers in base units,
// specs their canonical YAML.
//
// The lease and the fence (see docs/operations.md, "High availability"):
//   lease            one row: the leader's term, its name and address, when it last renewed
//                    and when the lease expires — by the database's clock, so masters'
//                    clocks do not matter.
//   paceline_fence   called first in every transaction a leader writes: it locks the lease
//                    row for share and fails with SQLSTATE PL001 unless the term is still the
//                    lease's. A takeover (which updates the row) therefore waits for writes in
//                    flight and every later write of the old term fails: no write of a deposed
//                    leader can commit after a new leader's term began.

#include <array>

namespace paceline::store::pg {

inline constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pools (path TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE jobs (
  id BIGINT PRIMARY KEY,
  pool TEXT NOT NULL,
  spec TEXT NOT NULL,
  version BIGINT NOT NULL,
  goal SMALLINT NOT NULL,
  created_us BIGINT,
  old_specs TEXT NOT NULL,
  updates TEXT NOT NULL,
  instances BIGINT NOT NULL
);
CREATE TABLE tasks (
  job BIGINT NOT NULL,
  instance BIGINT NOT NULL,
  run BIGINT NOT NULL,
  state SMALLINT NOT NULL,
  host TEXT NOT NULL,
  started_us BIGINT,
  finished_us BIGINT,
  exit_code INTEGER NOT NULL,
  signal INTEGER NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL,
  failures BIGINT NOT NULL,
  not_before_us BIGINT,
  restart_requested SMALLINT NOT NULL,
  spec_version BIGINT NOT NULL,
  next_spec_version BIGINT NOT NULL,
  volume_host TEXT NOT NULL,
  PRIMARY KEY (job, instance)
);
CREATE TABLE events (
  seq BIGSERIAL PRIMARY KEY,
  job BIGINT NOT NULL,
  instance BIGINT NOT NULL,
  run BIGINT NOT NULL,
  at_us BIGINT NOT NULL,
  state SMALLINT NOT NULL,
  host TEXT NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX events_by_task ON events (job, instance, seq);
CREATE TABLE hosts (
  name TEXT PRIMARY KEY,
  maintenance SMALLINT NOT NULL,
  cpu_milli BIGINT NOT NULL,
  memory_bytes BIGINT NOT NULL,
  disk_bytes BIGINT NOT NULL,
  gpu_milli BIGINT NOT NULL,
  labels TEXT NOT NULL
);
CREATE TABLE lease (
  id SMALLINT PRIMARY KEY CHECK (id = 1),
  term BIGINT NOT NULL,
  holder TEXT NOT NULL,
  address TEXT NOT NULL,
  renewed_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO lease VALUES (1, 0, '', '', NULL, '-infinity');
CREATE FUNCTION paceline_fence(t BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM lease WHERE id = 1 AND term = t FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'term % no longer holds the lease: another master is the leader', t
      USING ERRCODE = 'PL001';
  END IF;
END $$;
)sql";

// The migrations after version 1, in order: each takes the schema to `version`.
struct Migration {
  int version;
  const char* sql;
};
// Version 2, revisions for standbys that follow the store (store_mirror.h): every commit takes
// the next value of changes_rev first, and every row it writes carries it in `rev`; a deletion
// leaves a row in `deletions` with it. A standby reads the rows whose rev is newer than the last
// it saw. Commits are serial (one leader, fenced), so revisions grow in commit order.
inline constexpr const char* kSchemaV2 = R"sql(
CREATE SEQUENCE changes_rev;
ALTER TABLE pools ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_rev ON jobs (rev);
CREATE INDEX tasks_by_rev ON tasks (rev);
CREATE TABLE deletions (
  rev BIGINT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('pool', 'job', 'task')),
  job BIGINT NOT NULL DEFAULT 0,
  instance BIGINT NOT NULL DEFAULT 0,
  path TEXT NOT NULL DEFAULT ''
);
CREATE INDEX deletions_by_rev ON deletions (rev);
)sql";

// Version 3: events keep one index, by task (every read of events is by task); the primary key
// on seq cost an index insertion per event and served no query.
inline constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE events DROP CONSTRAINT events_pkey;
)sql";

// Version 4: who submitted each job; API tokens (never deleted: a revoked one keeps its row, and
// NULL expires_us or revoked_us is "never"), with revisions like the other rows so that a
// standby knows every token; the audit log, numbered by seq (a sequence: growing, never given
// twice; a failed commit may leave a gap) and not followed by standbys. The user and group
// columns are user_name and group_name: USER and GROUP are SQL keywords.
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
  created_us BIGINT,
  expires_us BIGINT,
  revoked_us BIGINT,
  rev BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE audit (
  seq BIGSERIAL PRIMARY KEY,
  at_us BIGINT NOT NULL,
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

// Version 5: the secrets of pools, by path, sealed (records.h: `sealed` is the hex of nonce,
// ciphertext and tag, never the clear value), with revisions like the other rows; unlike
// tokens, a secret's row is deleted with it, and the deletion is recorded for standbys (kind
// 'secret', by path).
inline constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE secrets (
  path TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  sealed TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_us BIGINT,
  updated_us BIGINT,
  rev BIGINT NOT NULL DEFAULT 0
);
ALTER TABLE deletions DROP CONSTRAINT deletions_kind_check;
ALTER TABLE deletions ADD CONSTRAINT deletions_kind_check
  CHECK (kind IN ('pool', 'job', 'task', 'secret'));
)sql";

// Version 6: a task's gang attempt (records.h TaskRecord::gang_attempt): how many times its gang
// was restarted together before its current run (job.gang.restart: gang).
inline constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE tasks ADD COLUMN gang_attempt BIGINT NOT NULL DEFAULT 0;
)sql";

// Version 7: what a standby needs to answer DNS for a service (docs/services.md): a task's
// checks as its agent last reported them and its run's ports (records.h TaskRecord::health,
// readiness, ports: "31000,31001"), and a host's address as its agent registered from
// (HostRecord::address).
inline constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE tasks ADD COLUMN health TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN readiness TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN ports TEXT NOT NULL DEFAULT '';
ALTER TABLE hosts ADD COLUMN address TEXT NOT NULL DEFAULT '';
)sql";

// Version 8: usage accounting (records/usage.h, store/usage_sql.h): what runs held, summed by
// hour, pool, job, owner and user; a commit adds to a row's sums. Not followed by standbys.
inline constexpr const char* kSchemaV8 = R"sql(
CREATE TABLE usage_hours (
  hour_us BIGINT NOT NULL,
  pool TEXT NOT NULL,
  job BIGINT NOT NULL,
  owner TEXT NOT NULL,
  user_name TEXT NOT NULL,
  job_name TEXT NOT NULL,
  cpu_milli_seconds BIGINT NOT NULL,
  memory_byte_seconds BIGINT NOT NULL,
  gpu_milli_seconds BIGINT NOT NULL,
  tasks BIGINT NOT NULL,
  PRIMARY KEY (hour_us, pool, job, owner, user_name)
);
)sql";

// Version 9: task events in blocks (store/event_block.h), one row per job and commit instead of
// one per event, as SQLite keeps them. Events written before stay in `events` and are read with
// the blocks (older first); nothing is written there any more.
inline constexpr const char* kSchemaV9 = R"sql(
CREATE TABLE event_blocks (
  seq BIGSERIAL PRIMARY KEY,
  job BIGINT NOT NULL,
  count BIGINT NOT NULL,
  data BYTEA NOT NULL
);
CREATE INDEX event_blocks_by_job ON event_blocks (job, seq);
)sql";

// Version 10: a task's row is its key and one blob (store/task_row.h), as SQLite keeps it, instead
// of a column per field: a commit sends 3 values per task instead of 24 and PostgreSQL writes a
// row of about 60 bytes instead of 200. The rows of `tasks` move to the new table
// (task_migration.h, run after this SQL in the same transaction), then `tasks_v9` goes.
//
// A task's row has no revision any more: every update changed `rev`, which `tasks_by_rev`
// indexed, so no update was HOT (heap-only: written in place of the old version's page without
// touching any index). Instead each commit that writes tasks adds one row to `task_changes`:
// its revision and the keys it wrote; a standby reads the keys changed after its revision and
// the rows by key. With the pages left 40 % free, most updates of a task are HOT. Like
// `deletions`, `task_changes` is compacted by the leader (change_compaction.h; `changes_from`
// in meta: the oldest revision whose changes are all kept).
//
// And the chain of pipelined commits (postgres_store.h): paceline_chain(after, this), called
// first in a commit's transaction, fails with SQLSTATE PL002 unless the connection's last
// committed link is `after`, and makes `this` the link. The link is a session setting set in
// the transaction, so a transaction that does not commit (at any statement, COMMIT included)
// takes its link back: a commit sent behind one that failed cannot commit.
inline constexpr const char* kSchemaV10 = R"sql(
CREATE FUNCTION paceline_chain(after TEXT, this TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(current_setting('paceline.chain', true), '') <> after THEN
    RAISE EXCEPTION 'the commit sent before this one did not commit' USING ERRCODE = 'PL002';
  END IF;
  PERFORM set_config('paceline.chain', this, false);
END $$;
ALTER TABLE tasks RENAME TO tasks_v9;
ALTER TABLE tasks_v9 RENAME CONSTRAINT tasks_pkey TO tasks_v9_pkey;
ALTER INDEX tasks_by_rev RENAME TO tasks_v9_by_rev;
CREATE TABLE tasks (
  job BIGINT NOT NULL,
  instance BIGINT NOT NULL,
  data BYTEA NOT NULL,
  PRIMARY KEY (job, instance)
) WITH (fillfactor = 60);
CREATE TABLE task_changes (
  rev BIGINT PRIMARY KEY,
  jobs BIGINT[] NOT NULL,
  instances BIGINT[] NOT NULL
);
-- The newest revision among the tasks moved stays the store's newest (NewestRevision).
INSERT INTO task_changes SELECT max(rev), '{}', '{}' FROM tasks_v9 HAVING max(rev) IS NOT NULL;
)sql";
inline constexpr int kTaskBlobsVersion = 10;

// Version 11: the values every commit writes that are large enough for PostgreSQL to compress
// (event blocks: a few KB each, about 30 bytes an event, 4:1 compressible; the key arrays of
// task_changes: 16 bytes a task written) are compressed with lz4 instead of pglz, PostgreSQL's
// default, which cost a fifth of the backend's time at 50,000 tasks/s
// (bench/results/scale-postgres-lz4-2026-11-30.md). Values written before keep their pglz;
// PostgreSQL reads both. A server built without lz4 (every Debian and PGDG build since 14 has
// it) keeps pglz, with a notice.
inline constexpr const char* kSchemaV11 = R"sql(
DO $$
BEGIN
  ALTER TABLE event_blocks ALTER COLUMN data SET COMPRESSION lz4;
  ALTER TABLE task_changes ALTER COLUMN jobs SET COMPRESSION lz4,
                           ALTER COLUMN instances SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this PostgreSQL has no lz4: event blocks stay compressed with pglz';
END $$;
)sql";

inline constexpr std::array<Migration, 10> kMigrations{{{2, kSchemaV2},
                                                        {3, kSchemaV3},
                                                        {4, kSchemaV4},
                                                        {5, kSchemaV5},
                                                        {6, kSchemaV6},
                                                        {7, kSchemaV7},
                                                        {8, kSchemaV8},
                                                        {9, kSchemaV9},
                                                        {10, kSchemaV10},
                                                        {11, kSchemaV11}}};

// The newest schema version this build knows.
inline constexpr int kSchemaVersion = 1 + static_cast<int>(kMigrations.size());

}  // namespace paceline::store::pg
