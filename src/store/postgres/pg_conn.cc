#include "store/postgres/pg_conn.h"

#include <libpq-fe.h>

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace paceline::store {
namespace {

// Commands sent before a Sync and the read of their results: bounds what waits in the socket
// buffers both ways (a pipeline that only writes can block against a server that only writes
// back), at one round trip per this many commands.
constexpr int kCommandsPerFlush = 1024;

std::string Trimmed(const char* message) {
  std::string s = message == nullptr ? "" : message;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The status a failed result stands for, by its SQLSTATE.
absl::StatusCode CodeOf(absl::string_view sqlstate) {
  if (sqlstate == "PL001") return absl::StatusCode::kFailedPrecondition;  // fenced
  if (absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57P") ||
      absl::StartsWith(sqlstate, "53")) {
    return absl::StatusCode::kUnavailable;
  }
  if (absl::StartsWith(sqlstate, "23")) return absl::StatusCode::kFailedPrecondition;
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::StatusCode::kAborted;
  return absl::StatusCode::kInternal;
}

struct ParamArrays {
  std::vector<const char*> values;
  explicit ParamArrays(const PgParams& params) {
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  }
  int n() const { return static_cast<int>(values.size()); }
};

}  // namespace

std::string RedactPassword(const std::string& url) {
  static const std::regex kPassword(R"(^([a-z]+://[^:@/]*):[^@/]*@)");
  return std::regex_replace(url, kPassword, "$1:***@");
}

PgRows::PgRows(pg_result* r) : r_(r) {}
PgRows::~PgRows() {
  if (r_ != nullptr) PQclear(r_);
}
int PgRows::size() const { return PQntuples(r_); }
bool PgRows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
absl::string_view PgRows::Text(int row, int col) const {
  return absl::string_view(PQgetvalue(r_, row, col),
                           static_cast<size_t>(PQgetlength(r_, row, col)));
}
absl::StatusOr<int64_t> PgRows::Int(int row, int col, absl::string_view what) const {
  int64_t v = 0;
  if (!absl::SimpleAtoi(Text(row, col), &v)) {
    return absl::DataLossError(absl::StrCat(what, ": '", Text(row, col), "' is not an integer"));
  }
  return v;
}

absl::StatusOr<std::unique_ptr<PgConn>> PgConn::Connect(const std::string& url,
                                                        absl::Duration timeout) {
  std::string seconds = absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(timeout)));
  std::string millis = absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout)));
  // A peer gone silent (a cut network): keepalives after a second of silence, and the
  // connection closed once sent data or probes stay unacknowledged for `timeout`. Before
  // `dbname`, so that the URL's own settings win.
  const char* keys[] = {"keepalives",       "keepalives_idle",  "keepalives_interval",
                        "keepalives_count", "tcp_user_timeout", "dbname",
                        "connect_timeout",  "application_name", nullptr};
  const char* values[] = {
      "1",        "1",    "1", seconds.c_str(), millis.c_str(), url.c_str(), seconds.c_str(),
      "paceline", nullptr};
  pg_conn* c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  std::string redacted = RedactPassword(url);
  if (c == nullptr) return absl::ResourceExhaustedError("out of memory connecting to PostgreSQL");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = Trimmed(PQerrorMessage(c));
    PQfinish(c);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", redacted, ": ", why));
  }
  return std::unique_ptr<PgConn>(new PgConn(c, std::move(redacted)));
}

PgConn::~PgConn() { PQfinish(c_); }

bool PgConn::healthy() const { return !broken_ && PQstatus(c_) == CONNECTION_OK; }

absl::Status PgConn::ConnectionLost(absl::string_view what) {
  broken_ = true;
  return absl::UnavailableError(absl::StrCat(what, ": lost the connection to ", redacted_url_, ": ",
                                             Trimmed(PQerrorMessage(c_))));
}

absl::Status PgConn::ResultStatus(pg_result* r, absl::string_view what) {
  if (r == nullptr) return ConnectionLost(what);
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_PIPELINE_SYNC) {
    return absl::OkStatus();
  }
  if (st == PGRES_PIPELINE_ABORTED) {
    return absl::AbortedError(absl::StrCat(what, ": skipped after an earlier error"));
  }
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  absl::StatusCode code = CodeOf(state == nullptr ? "" : state);
  if (PQstatus(c_) != CONNECTION_OK) {
    broken_ = true;
    code = absl::StatusCode::kUnavailable;
  }
  if (code == absl::StatusCode::kUnavailable) broken_ = true;
  return absl::Status(code, absl::StrCat(what, ": ", Trimmed(PQresultErrorMessage(r))));
}

absl::Status PgConn::Exec(absl::string_view sql, absl::string_view what) {
  std::string text(sql);
  PgRows rows(PQexec(c_, text.c_str()));
  return ResultStatus(rows.r_, what);
}

absl::StatusOr<PgRows> PgConn::Query(absl::string_view sql, const PgParams& params,
                                     absl::string_view what) {
  std::string text(sql);
  ParamArrays p(params);
  PgRows rows(PQexecParams(c_, text.c_str(), p.n(), nullptr, p.values.data(), nullptr, nullptr, 0));
  RETURN_IF_ERROR(ResultStatus(rows.r_, what));
  return rows;
}

absl::Status PgConn::Prepare(const char* name, absl::string_view sql) {
  if (prepared_.contains(name)) return absl::OkStatus();
  std::string text(sql);
  PgRows r(PQprepare(c_, name, text.c_str(), 0, nullptr));
  RETURN_IF_ERROR(ResultStatus(r.r_, absl::StrCat("preparing ", name)));
  prepared_.insert(name);
  return absl::OkStatus();
}

void AppendCopyField(std::string& rows, const std::optional<std::string>& value, bool first) {
  if (!first) rows.push_back('\t');
  if (!value) {
    rows.append("\\N");
    return;
  }
  for (char ch : *value) {
    switch (ch) {
      case '\\':
        rows.append("\\\\");
        break;
      case '\t':
        rows.append("\\t");
        break;
      case '\n':
        rows.append("\\n");
        break;
      case '\r':
        rows.append("\\r");
        break;
      default:
        rows.push_back(ch);
    }
  }
}

absl::Status PgConn::CopyIn(const PgCopy& copy, absl::string_view what) {
  pg_result* r = PQexec(c_, copy.sql);
  if (r == nullptr) return ConnectionLost(what);
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    absl::Status s = ResultStatus(r, what);
    PQclear(r);
    return s.ok() ? absl::InternalError(absl::StrCat(what, ": COPY did not start")) : s;
  }
  PQclear(r);
  if (PQputCopyData(c_, copy.rows.data(), static_cast<int>(copy.rows.size())) != 1 ||
      PQputCopyEnd(c_, nullptr) != 1) {
    return ConnectionLost(what);
  }
  absl::Status first;
  while ((r = PQgetResult(c_)) != nullptr) {
    absl::Status s = ResultStatus(r, what);
    PQclear(r);
    if (first.ok()) first = s;
  }
  return first;
}

absl::Status PgConn::Transaction(const std::vector<PgCommand>& commands,
                                 const std::vector<PgCopy>& copies, absl::string_view what) {
  if (PQenterPipelineMode(c_) != 1) return ConnectionLost(what);
  absl::Status first;  // the first failure: the one to report
  bool lost = false;
  // Ends the commands sent so far with a Sync (inside BEGIN it does not commit) and reads their
  // results: `n` commands, then the Sync's own.
  // The results come in the order sent: BEGIN, the commands, COMMIT.
  size_t results_read = 0;
  auto sync_and_read = [&](int n) {
    if (PQpipelineSync(c_) != 1) {
      lost = true;
      return;
    }
    for (int i = 0; i <= n; ++i) {
      pg_result* r = PQgetResult(c_);
      if (r == nullptr) {
        lost = true;
        return;
      }
      bool is_sync = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
      if (!is_sync) {
        const size_t command = results_read++;  // 0 is BEGIN
        if (command >= 1 && command <= commands.size() &&
            commands[command - 1].first_value != nullptr && PQresultStatus(r) == PGRES_TUPLES_OK &&
            PQntuples(r) > 0) {
          commands[command - 1].first_value->assign(PQgetvalue(r, 0, 0));
        }
      }
      absl::Status s = ResultStatus(r, what);
      PQclear(r);
      if (!s.ok() && first.ok()) first = s;
      if (is_sync) return;
      while ((r = PQgetResult(c_)) != nullptr) PQclear(r);  // the end of this command's results
    }
  };
  auto send = [&](const char* statement, const PgParams* params) {
    if (statement == nullptr) {  // BEGIN or COMMIT
      return PQsendQueryParams(c_, params == nullptr ? "BEGIN" : "COMMIT", 0, nullptr, nullptr,
                               nullptr, nullptr, 0) == 1;
    }
    ParamArrays p(*params);
    return PQsendQueryPrepared(c_, statement, p.n(), p.values.data(), nullptr, nullptr, 0) == 1;
  };
  int unread = 0;
  lost = !send(nullptr, nullptr);
  ++unread;
  for (size_t i = 0; i < commands.size() && !lost && first.ok(); ++i) {
    if (!send(commands[i].statement, &commands[i].params)) {
      lost = true;
      break;
    }
    if (++unread >= kCommandsPerFlush) {
      sync_and_read(unread);
      unread = 0;
    }
  }
  static const PgParams kCommit;
  if (!lost && copies.empty()) {
    // COMMIT of a transaction that failed rolls it back, without an error of its own.
    lost = !send(nullptr, &kCommit);
    if (!lost) sync_and_read(unread + 1);
  } else if (!lost) {
    sync_and_read(unread);
  }
  if (lost || PQexitPipelineMode(c_) != 1) return ConnectionLost(what);
  if (!copies.empty() && first.ok()) {
    for (const PgCopy& copy : copies) {
      first = CopyIn(copy, what);
      if (!first.ok()) break;
    }
    if (first.ok()) first = Exec("COMMIT", what);
    if (!healthy()) return first.ok() ? ConnectionLost(what) : first;
  }
  if (first.ok() && PQtransactionStatus(c_) != PQTRANS_IDLE) {
    first = absl::InternalError(absl::StrCat(what, ": the transaction did not end"));
  }
  if (PQtransactionStatus(c_) != PQTRANS_IDLE) (void)Exec("ROLLBACK", "rolling back");
  return first;
}

}  // namespace paceline::store
