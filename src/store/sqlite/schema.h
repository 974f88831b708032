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

}  // namespace paceline::store
