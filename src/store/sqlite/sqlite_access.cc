// SqliteStore's API tokens and audit log (sqlite_store.h; schema.h, version 4), and the
// secrets of pools (version 5).

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/audit_query.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::store {
namespace {

// The columns of `audit` from seq on, as AuditSelectSql reads them.
records::AuditRecord AuditAt(const Statement& st) {
  records::AuditRecord a;
  a.seq = st.ColumnInt(0);
  a.at = absl::FromUnixMicros(st.ColumnInt(1));
  a.user = st.ColumnText(2);
  a.source = st.ColumnText(3);
  a.action = st.ColumnText(4);
  a.pool = st.ColumnText(5);
  a.target = st.ColumnText(6);
  a.outcome = st.ColumnText(7);
  a.message = st.ColumnText(8);
  a.request_id = st.ColumnText(9);
  return a;
}

}  // namespace

absl::Status SqliteStore::ApplyAccess(const records::WriteBatch& b) {
  for (const records::TokenRecord& t : b.put_tokens) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT OR REPLACE INTO tokens (id, name, user_name, group_name, "
                            "role, scope, salt, hash, created_by, created_us, expires_us, "
                            "revoked_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    st->Reset();
    st->Bind(1, t.id)
        .Bind(2, t.name)
        .Bind(3, t.user)
        .Bind(4, t.group)
        .Bind(5, t.role)
        .Bind(6, t.scope)
        .Bind(7, t.salt)
        .Bind(8, t.hash)
        .Bind(9, t.created_by);
    st->BindTime(10, t.created_at, absl::InfinitePast());
    st->BindTime(11, t.expires_at, absl::InfiniteFuture());
    st->BindTime(12, t.revoked_at, absl::InfiniteFuture());
    RETURN_IF_ERROR(st->Run());
  }
  for (const std::string& path : b.delete_secrets) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM secrets WHERE path = ?"));
    st->Reset();
    st->Bind(1, path);
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::SecretRecord& r : b.put_secrets) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT OR REPLACE INTO secrets (path, key_id, sealed, created_by, "
                            "created_us, updated_us) VALUES (?, ?, ?, ?, ?, ?)"));
    st->Reset();
    st->Bind(1, r.path).Bind(2, r.key_id).Bind(3, r.sealed).Bind(4, r.created_by);
    st->BindTime(5, r.created_at, absl::InfinitePast());
    st->BindTime(6, r.updated_at, absl::InfinitePast());
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::AuditRecord& a : b.audit) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT INTO audit (at_us, user_name, source, action, pool, target, "
                            "outcome, message, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    st->Reset();
    st->Bind(1, absl::ToUnixMicros(a.at))
        .Bind(2, a.user)
        .Bind(3, a.source)
        .Bind(4, a.action)
        .Bind(5, a.pool)
        .Bind(6, a.target)
        .Bind(7, a.outcome)
        .Bind(8, a.message)
        .Bind(9, a.request_id);
    RETURN_IF_ERROR(st->Run());
  }
  if (b.prune_audit_before) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM audit WHERE at_us < ?"));
    st->Reset();
    st->Bind(1, absl::ToUnixMicros(*b.prune_audit_before));
    RETURN_IF_ERROR(st->Run());
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::LoadTokens(records::StoreContents& out) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("SELECT id, name, user_name, group_name, role, scope, salt, hash, "
                                "created_by, created_us, expires_us, revoked_us FROM tokens "
                                "ORDER BY id"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return absl::OkStatus();
    records::TokenRecord t;
    t.id = st.ColumnText(0);
    t.name = st.ColumnText(1);
    t.user = st.ColumnText(2);
    t.group = st.ColumnText(3);
    t.role = st.ColumnText(4);
    t.scope = st.ColumnText(5);
    t.salt = st.ColumnText(6);
    t.hash = st.ColumnText(7);
    t.created_by = st.ColumnText(8);
    t.created_at = st.ColumnTime(9, absl::InfinitePast());
    t.expires_at = st.ColumnTime(10, absl::InfiniteFuture());
    t.revoked_at = st.ColumnTime(11, absl::InfiniteFuture());
    out.tokens.push_back(std::move(t));
  }
}

absl::Status SqliteStore::LoadSecrets(records::StoreContents& out) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("SELECT path, key_id, sealed, created_by, created_us, updated_us "
                                "FROM secrets ORDER BY path"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return absl::OkStatus();
    records::SecretRecord r;
    r.path = st.ColumnText(0);
    r.key_id = st.ColumnText(1);
    r.sealed = st.ColumnText(2);
    r.created_by = st.ColumnText(3);
    r.created_at = st.ColumnTime(4, absl::InfinitePast());
    r.updated_at = st.ColumnTime(5, absl::InfinitePast());
    out.secrets.push_back(std::move(r));
  }
}

absl::StatusOr<std::vector<records::AuditRecord>> SqliteStore::ListAudit(
    const records::AuditQuery& query) {
  AuditSelect select = AuditSelectSql(query, '?');
  ASSIGN_OR_RETURN(Statement * st, Cached(select.sql));
  st->Reset();
  for (size_t i = 0; i < select.params.size(); ++i) {
    std::visit([&](const auto& v) { st->Bind(static_cast<int>(i + 1), v); }, select.params[i]);
  }
  std::vector<records::AuditRecord> out;
  absl::Status s;
  while (true) {
    absl::StatusOr<bool> row = st->Step();
    if (!row.ok() || !*row) {
      s = row.status();
      break;
    }
    out.push_back(AuditAt(*st));
  }
  st->Reset();
  RETURN_IF_ERROR(s);
  return out;
}

}  // namespace paceline::store
