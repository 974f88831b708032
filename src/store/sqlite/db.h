#pragma once
// SqliteDb: a small RAII wrapper over one sqlite3 connection, and Statement over one prepared
// statement. Errors come back as absl::Status: UNAVAILABLE for I/O and busy errors (the store
// is down or locked), INTERNAL for SQL errors (a bug), FAILED_PRECONDITION for constraint
// violations.
//
// Open() turns on WAL journaling and the synchronous level of OpenOptions. A connection is used by
// one thread at a time (the store's writer thread); it is not shared.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct sqlite3;
struct sqlite3_stmt;

namespace paceline::store {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, absl::string_view text);
  Statement& BindBlob(int index, absl::string_view bytes);
  Statement& BindNull(int index);
  // A time in Unix microseconds; NULL stands for `null_means` (InfinitePast: "not set";
  // InfiniteFuture for "never expires" and "not revoked"). ColumnTime reads it back.
  Statement& BindTime(int index, absl::Time t, absl::Time null_means = absl::InfinitePast());

  // Runs one step: true when a row is ready to read, false when done.
  absl::StatusOr<bool> Step();
  // Steps until done (for statements that return no rows).
  absl::Status Run();
  // Resets the statement so it can be bound and run again.
  void Reset();

  // The number of columns of the statement's rows.
  int ColumnCount() const;
  int64_t ColumnInt(int col) const;
  std::string ColumnText(int col) const;
  // The text of a column, valid until the next Step, Reset or column read of `col`.
  absl::string_view ColumnView(int col) const;
  // The bytes of a BLOB column, valid until the next Step, Reset or column read of `col`.
  absl::string_view ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;
  absl::Time ColumnTime(int col, absl::Time null_means = absl::InfinitePast()) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

struct OpenOptions {
  // FULL: every commit is fsync'ed (durable before acknowledged). NORMAL is faster and still
  // consistent in WAL mode, but may lose the last commits on power loss.
  bool synchronous_full = true;
  int busy_timeout_ms = 5000;
};

class SqliteDb {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                        const OpenOptions& options = {});
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Executes one or more statements that return no rows.
  absl::Status Exec(absl::string_view sql);
  absl::StatusOr<Statement> Prepare(absl::string_view sql);
  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// Maps an SQLite result code to a canonical status; `what` says what was being done.
absl::Status SqliteStatus(int code, sqlite3* db, absl::string_view what);

}  // namespace paceline::store
