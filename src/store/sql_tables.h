#pragma once
// The tables of the SQL stores, each described once (sql_table.h): its columns in the order the
// backends write and read them, with their encoders and decoders. Both backends share the
// tables of pools, jobs, hosts, tokens, secrets and the audit log; tasks and events are kept
// alike: a task's row is its key and one blob (task_row.h), and events go in blocks per job and
// commit (event_block.h). PostgreSQL databases written before schema version 10 kept a column
// per task field, and before version 9 an event per row: the migrations read those.
//
// To add a field to a record: add its column here, and a migration that adds the column in each
// backend's schema.h. Every open checks that the database has exactly these columns.
//
// Thread-safety: immutable.

#include <string>
#include <vector>

#include "records/records.h"
#include "store/sql_table.h"
#include "store/sql_text.h"

namespace paceline::store {

// A job's row: the record and its spec's text, parsed after the rows are read (spec_parsing.h).
struct JobRow : records::JobRecord {
  std::string spec_text;
};

// One block of a job's events of one commit (SQLite, event_block.h): written from the events
// themselves (encoded once, as the statement is bound), read back as the stored block.
struct EventBlock {
  int64_t job = 0;
  const std::vector<const records::TaskEvent*>* events = nullptr;
};
struct EventBlockRow {
  int64_t job = 0;
  int64_t count = 0;
  std::string data;
};

extern const sql::Table<records::PoolRecord> kPoolTable;
extern const sql::Table<records::JobRecord, JobRow> kJobTable;
extern const sql::Table<records::HostRecord> kHostTable;
extern const sql::Table<records::TokenRecord> kTokenTable;
extern const sql::Table<records::SecretRecord> kSecretTable;
// The audit log: `seq` is the database's (a sequence), read but never written.
extern const sql::Table<records::AuditRecord> kAuditTable;

// A task is (job, instance, data); data is task_row.h's blob.
extern const sql::Table<records::TaskRecord> kTaskTable;
extern const sql::Table<EventBlock, EventBlockRow> kSqliteEventBlockTable;

// PostgreSQL before schema version 10: a task's fields in columns, in the table `tasks_v9` that
// the migration to version 10 reads (schema.h).
extern const sql::Table<records::TaskRecord> kPgTaskTableV9;
// PostgreSQL: an event a row, `seq` the database's (rows written before version 9).
extern const sql::Table<records::TaskEvent> kPgEventTable;
// PostgreSQL from schema version 9: the events in blocks, as SQLite keeps them.
extern const sql::Table<EventBlock, EventBlockRow> kPgEventBlockTable;

// What each backend checks at open: the tables both keep, then its own (tasks and events).
std::vector<sql::Shape> SqliteTableShapes();
std::vector<sql::Shape> PgTableShapes();

}  // namespace paceline::store
