#include "store/sqlite/db.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace paceline::store {

absl::Status SqliteStatus(int code, sqlite3* db, absl::string_view what) {
  int primary = code & 0xff;
  if (primary == SQLITE_OK || primary == SQLITE_DONE || primary == SQLITE_ROW) {
    return absl::OkStatus();
  }
  std::string msg = absl::StrCat(what, ": ", db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
    case SQLITE_NOMEM:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
      return absl::FailedPreconditionError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    default:
      return absl::InternalError(msg);
  }
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, absl::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindBlob(int index, absl::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, db_, "sqlite step");
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return text ? std::string(reinterpret_cast<const char*>(text), n) : std::string();
}

absl::string_view Statement::ColumnView(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return text ? absl::string_view(reinterpret_cast<const char*>(text), n) : absl::string_view();
}

absl::string_view Statement::ColumnBlob(int col) const {
  const void* bytes = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return bytes ? absl::string_view(static_cast<const char*>(bytes), n) : absl::string_view();
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

Statement& Statement::BindTime(int index, absl::Time t, absl::Time null_means) {
  return t == null_means ? BindNull(index) : Bind(index, absl::ToUnixMicros(t));
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

absl::Time Statement::ColumnTime(int col, absl::Time null_means) const {
  return ColumnIsNull(col) ? null_means : absl::FromUnixMicros(ColumnInt(col));
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                         const OpenOptions& options) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = SqliteStatus(rc, raw, absl::StrCat("open ", path));
    sqlite3_close(raw);
    return s;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  absl::Status s = db->Exec(absl::StrCat(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=", options.synchronous_full ? "FULL" : "NORMAL",
      "; PRAGMA foreign_keys=ON;"));
  if (!s.ok()) return s;
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

absl::Status SqliteDb::Exec(absl::string_view sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  return SqliteStatus(rc, db_, "sqlite exec");
}

absl::StatusOr<Statement> SqliteDb::Prepare(absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db_, absl::StrCat("prepare: ", sql));
  return Statement(db_, stmt);
}

}  // namespace paceline::store
