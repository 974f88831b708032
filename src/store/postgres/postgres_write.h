#pragma once
// The statements a PostgresStore commit sends, in one pipelined transaction (pg_conn.h):
//   1. paceline_fence(term), when the store is fenced (schema.h; postgres_store.h);
//   2. paceline_chain(after, this) (schema.h, version 10): the transaction commits only if the
//      commit sent before it on the connection did;
//   3. nextval('changes_rev'): the commit's revision, which every row it writes carries (but
//      audit records, which standbys do not follow) and every deletion records (schema.h,
//      version 2; store_mirror.h);
//   4. the batches' writes in order. Task upserts, the bulk of a commit, go 64 rows per
//      statement: a task written several times in one commit is sent once, with its last
//      value, and what is held is sent before any deletion of tasks or jobs, so the result is
//      that of applying the batches one by one. Events are held by job and written as one
//      block per job (store/event_block.h, schema version 9), before such a deletion and at
//      the end;
//   5. the keys of the tasks written, one row of task_changes (schema version 10).
//
// Thread-safety: pure functions; PrepareWrites uses the connection (see pg_conn.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "records/records.h"
#include "store/postgres/pg_conn.h"

namespace paceline::store::pg {

// Upserts one row of `meta` ($1 key, $2 value); Migrate uses it outside the commits too.
inline constexpr const char* kPutMetaSql =
    "INSERT INTO meta (key, value) VALUES ($1, $2) "
    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";

// Prepares every statement WriteCommands uses (once per connection).
absl::Status PrepareWrites(PgConn& c);

// What one commit sends (PgConn::SendTransaction).
struct PgWrite {
  std::vector<PgCommand> commands;
  size_t revision_command = 0;  // the command that takes the commit's revision
};

// A commit's link in its connection's chain: the link of the commit sent before it ("" for the
// connection's first) and its own.
struct ChainLink {
  std::string after;
  std::string self;
};

// Whether `batch` writes or deletes a row that standbys follow (store_mirror.h): a pool, job,
// task, host, token or secret. Events, audit records and usage are not followed.
bool WritesFollowedRows(const records::WriteBatch& batch);

// The writes of one commit of `batches`, fenced by `fence_term` when it is set; with
// `compact_before`, the commit also deletes the changes standbys follow that are older than that
// revision (change_compaction.h).
PgWrite WriteCommands(const std::vector<const records::WriteBatch*>& batches,
                      std::optional<uint64_t> fence_term, const ChainLink& link,
                      std::optional<int64_t> compact_before = std::nullopt);

}  // namespace paceline::store::pg
