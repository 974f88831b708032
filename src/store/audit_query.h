#pragma once
// How every backend answers ListAudit (store.h): which records match an AuditQuery, and the one
// SELECT the SQL backends run for it.
//
// A pool filter holds that pool and every pool below it: "/ads" holds "/ads" and "/ads/x", not
// "/adsx"; "/" holds every pool. The SELECT reads the columns of the `audit` table as
// sql_tables.h describes them (kAuditTable: seq first), newest first, with only the conditions
// the query sets, so that an index serves each: (user_name, seq) for a user, at_us for a time.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "records/records.h"

namespace paceline::store {

// Whether `pool` is `subtree` or below it.
bool InPoolSubtree(absl::string_view subtree, absl::string_view pool);

// Whether `r` meets every condition of `q` (not the limit).
bool AuditMatches(const records::AuditRecord& r, const records::AuditQuery& q);

// The SELECT of ListAudit: its text, with numbered parameters written `marker` and the number
// ('?' for SQLite: ?1, ?2; '$' for PostgreSQL: $1, $2), and their values in order.
struct AuditSelect {
  std::string sql;
  std::vector<std::variant<int64_t, std::string>> params;
};
AuditSelect AuditSelectSql(const records::AuditQuery& q, char marker);

}  // namespace paceline::store
