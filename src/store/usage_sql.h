#pragma once
// The usage table of the SQL stores (records/usage.h): one row per (hour, pool, job, owner,
// user), described once like the other tables (sql_table.h) and checked at every open, and the
// statements that only it needs: the upsert that adds to a row's sums instead of replacing
// them, its selection by a query (a time range of whole hours, a pool's subtree), its pruning.
//
//   usage_hours (hour_us, pool, job, owner, user_name,   -- the key
//                job_name, cpu_milli_seconds, memory_byte_seconds, gpu_milli_seconds, tasks)
//
// Standbys do not follow it (no `rev`): usage is read from the store when asked for.
//
// Thread-safety: immutable descriptions and pure functions.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "records/records.h"
#include "store/sql_table.h"
#include "store/sql_text.h"

namespace paceline::store {

extern const sql::Table<records::UsageRecord> kUsageTable;

// INSERT of one row that, on a row of the same key, adds the sums to the stored ones and takes
// the job name. Placeholders: `?N` (SQLite) or `$N` (PostgreSQL), in the table's column order.
std::string AddUsageSql(sql::Dialect d);
// DELETE of the hours before the first parameter (microseconds since the epoch).
std::string PruneUsageSql(sql::Dialect d);

// The SELECT of the rows matching a query (records::UsageMatches), in key order, and its
// parameters in order; `marker` is '?' (SQLite) or '$' (PostgreSQL).
struct UsageSelect {
  std::string sql;
  std::vector<std::variant<int64_t, std::string>> params;
};
UsageSelect UsageSelectSql(const records::UsageQuery& q, char marker);

}  // namespace paceline::store
