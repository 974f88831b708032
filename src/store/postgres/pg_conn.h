#pragma once
// PgConn: a small RAII wrapper over one libpq connection, and PgRows over one query result.
//
// Errors come back as absl::Status:
//   UNAVAILABLE          the connection is down or the server is shutting down or starting
//                        (SQLSTATE classes 08, 57P, 53); the connection is then marked broken
//                        and the caller reconnects (see healthy()).
//   FAILED_PRECONDITION  a Paceline fence refused the write (SQLSTATE PL001, see schema.h) or a
//                        constraint was violated (class 23).
//   ABORTED              a serialization failure or deadlock (40001, 40P01): retry.
//   INTERNAL             any other SQL error (a bug).
// Each message names what was being done and carries the server's message.
//
// Values travel as text (PostgreSQL's text format); a nullopt parameter is SQL NULL.
//
// Transactions are pipelined (libpq pipeline mode): SendTransaction() sends BEGIN, the commands
// and COMMIT, then a Sync, without waiting for any result, and FinishTransaction() reads the
// results of the oldest transaction sent: a round trip per transaction, not per write, and a
// second transaction can be on its way while the server runs the first. When a command of a
// transaction fails, the server skips the rest of it (its COMMIT included): nothing of it is
// visible and FinishTransaction returns the first error. A transaction sent behind one that
// failed must not commit: its first command must say so (paceline_chain, schema.h); the
// connection itself only guarantees order. When the connection breaks, every transaction in
// flight is UNAVAILABLE and its outcome unknown: the caller must reload what it believes from
// the database. While a transaction is in flight, Exec, Query, Prepare of a new statement and
// CopyIn answer FAILED_PRECONDITION.
//
// Thread-safety: a connection is used by one thread at a time.

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct pg_conn;
struct pg_result;

namespace paceline::store {

using PgParams = std::vector<std::optional<std::string>>;

// The rows of one result, read by (row, column).
class PgRows {
 public:
  explicit PgRows(pg_result* r);
  PgRows(PgRows&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgRows(const PgRows&) = delete;
  PgRows& operator=(const PgRows&) = delete;
  ~PgRows();

  int size() const;
  bool IsNull(int row, int col) const;
  absl::string_view Text(int row, int col) const;
  // The column as an integer; DATA_LOSS naming `what` when it is not one.
  absl::StatusOr<int64_t> Int(int row, int col, absl::string_view what) const;

 private:
  friend class PgConn;
  pg_result* r_;
};

// One statement of a pipelined transaction: a statement prepared by Prepare(), with its values.
struct PgCommand {
  const char* statement;
  PgParams params;
  // Where the first column of its first row goes, when set (a commit's revision).
  std::string* first_value = nullptr;
};

// Rows sent with COPY ... FROM STDIN in PostgreSQL's text format, after a transaction's
// commands: for inserts of many rows, COPY costs the server less per row than INSERT.
struct PgCopy {
  const char* sql;   // "COPY table (columns) FROM STDIN"
  std::string rows;  // one line per row, its fields appended by AppendCopyField
};

// Appends one field to the row being built at the end of `rows`: a tab before it unless it is
// the row's first, the value escaped for COPY's text format (\N for nullopt). End each row with
// '\n'.
void AppendCopyField(std::string& rows, const std::optional<std::string>& value, bool first);

class PgConn {
 public:
  // Connects to `url` (postgres://user[:password]@host[:port][,host[:port]...]/database?options:
  // libpq's, e.g. target_session_attrs=read-write to find the primary of several), giving up
  // after `timeout`. A server that goes silent (a cut network) breaks the connection within
  // about `timeout` plus a second: TCP keepalives after a second of silence, and
  // tcp_user_timeout `timeout` for data or probes left unacknowledged (the URL may set its own).
  static absl::StatusOr<std::unique_ptr<PgConn>> Connect(const std::string& url,
                                                         absl::Duration timeout);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs SQL that may hold several statements and returns no rows.
  absl::Status Exec(absl::string_view sql, absl::string_view what);
  // Runs one statement with parameters ($1, $2, ...) and returns its rows.
  absl::StatusOr<PgRows> Query(absl::string_view sql, const PgParams& params,
                               absl::string_view what);
  // Prepares `sql` under `name` once per connection (`name` must be a string literal).
  absl::Status Prepare(const char* name, absl::string_view sql);
  // Runs one COPY, in the transaction the caller has open if any.
  absl::Status CopyIn(const PgCopy& copy, absl::string_view what);
  // Sends the commands as one transaction, and reads the outcome of the oldest sent (see the
  // contract above). The commands' first_value targets must live until their outcome is read.
  absl::Status SendTransaction(std::vector<PgCommand> commands, absl::string_view what);
  absl::Status FinishTransaction();
  // Reads what has arrived of the oldest transaction's results, without waiting: true when
  // they are all read (or the connection broke, or none is in flight), so that
  // FinishTransaction returns at once. socket() becomes readable when more may have arrived.
  bool TransactionReady();
  int socket() const;

  // False once the connection broke: open a new one.
  bool healthy() const;
  // The URL with any password replaced by "***".
  const std::string& redacted_url() const { return redacted_url_; }

 private:
  PgConn(pg_conn* c, std::string redacted) : c_(c), redacted_url_(std::move(redacted)) {}
  absl::Status ResultStatus(pg_result* r, absl::string_view what);
  absl::Status ConnectionLost(absl::string_view what);

  // FAILED_PRECONDITION while a transaction is in flight.
  absl::Status Idle(absl::string_view what) const;
  bool Send(const char* statement, const PgParams& params);

  // A transaction sent, and how far its results are read: BEGIN is command 0, then the
  // commands, then COMMIT; each command's first result, then the null that ends it; then the
  // Sync's result.
  struct Sent {
    std::vector<PgCommand> commands;
    std::string what;
    size_t index = 0;     // the command whose results come next
    bool ending = false;  // its first result is read; the null that ends it comes next
    bool synced = false;  // every result is read
    absl::Status first;   // the first error among them
  };
  // Takes one result of `t` (null: the end of a command's results); false when the
  // connection is lost.
  bool TakeResult(Sent& t, pg_result* r);

  pg_conn* c_;
  std::string redacted_url_;
  std::deque<Sent> sent_;  // transactions sent, oldest first
  absl::flat_hash_set<const char*> prepared_;
  bool broken_ = false;
};

// "postgres://user:***@host/db" for "postgres://user:secret@host/db".
std::string RedactPassword(const std::string& url);

}  // namespace paceline::store
