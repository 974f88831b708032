// SqliteStore's API tokens and audit log (sqlite_store.h; schema.h, version 4), the secrets of
// pools (version 5), written as sql_tables.h describes them, and usage (version 9,
// usage_sql.h).

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/audit_query.h"
#include "store/sql_tables.h"
#include "store/sqlite/sqlite_store.h"
#include "store/usage_sql.h"

namespace paceline::store {
namespace {

// Binds `params` to the prepared `st` and reads every row it selects as a `Record` of `table`.
template <typename Record, typename Params, typename Table>
absl::StatusOr<std::vector<Record>> SelectAll(Statement& st, const Params& params,
                                              const Table& table) {
  st.Reset();
  for (size_t i = 0; i < params.size(); ++i) {
    std::visit([&](const auto& v) { st.Bind(static_cast<int>(i + 1), v); }, params[i]);
  }
  std::vector<Record> out;
  absl::Status s;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok() || !*row) {
      s = row.status();
      break;
    }
    Record r;
    s = ReadRow(st, table, r);
    if (!s.ok()) break;
    out.push_back(std::move(r));
  }
  st.Reset();
  RETURN_IF_ERROR(s);
  return out;
}

// The statements, made at first use (as in sqlite_store.cc).
struct AccessStatements {
  std::string put_token, put_secret, append_audit, add_usage, prune_usage;
};
const AccessStatements& AccessSql() {
  constexpr sql::Dialect kSqlite = sql::Dialect::kSqlite;
  static const AccessStatements s{sql::UpsertSql(sql::ShapeOf(kTokenTable), kSqlite),
                                  sql::UpsertSql(sql::ShapeOf(kSecretTable), kSqlite),
                                  sql::InsertSql(sql::ShapeOf(kAuditTable), kSqlite),
                                  AddUsageSql(kSqlite), PruneUsageSql(kSqlite)};
  return s;
}

}  // namespace

absl::Status SqliteStore::ApplyAccess(const records::WriteBatch& b) {
  for (const records::TokenRecord& t : b.put_tokens) {
    RETURN_IF_ERROR(Put(AccessSql().put_token, kTokenTable, t));
  }
  for (const std::string& path : b.delete_secrets) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM secrets WHERE path = ?"));
    st->Reset();
    st->Bind(1, path);
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::SecretRecord& r : b.put_secrets) {
    RETURN_IF_ERROR(Put(AccessSql().put_secret, kSecretTable, r));
  }
  for (const records::AuditRecord& a : b.audit)
    RETURN_IF_ERROR(Put(AccessSql().append_audit, kAuditTable, a));
  if (b.prune_audit_before) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM audit WHERE at_us < ?"));
    st->Reset();
    st->Bind(1, absl::ToUnixMicros(*b.prune_audit_before));
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::UsageRecord& u : b.add_usage)
    RETURN_IF_ERROR(Put(AccessSql().add_usage, kUsageTable, u));
  if (b.prune_usage_before) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached(AccessSql().prune_usage));
    st->Reset();
    st->Bind(1, absl::ToUnixMicros(*b.prune_usage_before));
    RETURN_IF_ERROR(st->Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<records::AuditRecord>> SqliteStore::ListAudit(
    const records::AuditQuery& query) {
  AuditSelect select = AuditSelectSql(query, '?');
  ASSIGN_OR_RETURN(Statement * st, Cached(select.sql));
  return SelectAll<records::AuditRecord>(*st, select.params, kAuditTable);
}

absl::StatusOr<std::vector<records::UsageRecord>> SqliteStore::ListUsage(
    const records::UsageQuery& query) {
  UsageSelect select = UsageSelectSql(query, '?');
  ASSIGN_OR_RETURN(Statement * st, Cached(select.sql));
  return SelectAll<records::UsageRecord>(*st, select.params, kUsageTable);
}

}  // namespace paceline::store
