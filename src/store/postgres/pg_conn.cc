#include "store/postgres/pg_conn.h"

#include <libpq-fe.h>

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace paceline::store {
namespace {

std::string Trimmed(const char* message) {
  std::string s = message == nullptr ? "" : message;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The status a failed result stands for, by its SQLSTATE.
absl::StatusCode CodeOf(absl::string_view sqlstate) {
  if (sqlstate == "PL001") return absl::StatusCode::kFailedPrecondition;  // fenced
  if (sqlstate == "PL002") return absl::StatusCode::kAborted;  // behind a commit that failed
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

absl::Status PgConn::Idle(absl::string_view what) const {
  if (sent_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", sent_.size(), " pipelined transaction(s) still in flight"));
}

absl::Status PgConn::Exec(absl::string_view sql, absl::string_view what) {
  RETURN_IF_ERROR(Idle(what));
  std::string text(sql);
  PgRows rows(PQexec(c_, text.c_str()));
  return ResultStatus(rows.r_, what);
}

absl::StatusOr<PgRows> PgConn::Query(absl::string_view sql, const PgParams& params,
                                     absl::string_view what) {
  RETURN_IF_ERROR(Idle(what));
  std::string text(sql);
  ParamArrays p(params);
  PgRows rows(PQexecParams(c_, text.c_str(), p.n(), nullptr, p.values.data(), nullptr, nullptr, 0));
  RETURN_IF_ERROR(ResultStatus(rows.r_, what));
  return rows;
}

absl::Status PgConn::Prepare(const char* name, absl::string_view sql) {
  if (prepared_.contains(name)) return absl::OkStatus();
  RETURN_IF_ERROR(Idle(absl::StrCat("preparing ", name)));
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
  RETURN_IF_ERROR(Idle(what));
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

bool PgConn::Send(const char* statement, const PgParams& params) {
  ParamArrays p(params);
  return PQsendQueryPrepared(c_, statement, p.n(), p.values.data(), nullptr, nullptr, 0) == 1;
}

absl::Status PgConn::SendTransaction(std::vector<PgCommand> commands, absl::string_view what) {
  if (broken_) return ConnectionLost(what);
  if (sent_.empty() && PQenterPipelineMode(c_) != 1) return ConnectionLost(what);
  auto text = [&](const char* sql) {
    return PQsendQueryParams(c_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
  };
  // libpq reads what the server answers while it waits to write, so a long transaction cannot
  // block against a server blocked writing its results.
  bool sent = text("BEGIN");
  for (size_t i = 0; i < commands.size() && sent; ++i) {
    sent = Send(commands[i].statement, commands[i].params);
  }
  sent = sent && text("COMMIT") && PQpipelineSync(c_) == 1;
  if (!sent) return ConnectionLost(what);
  sent_.push_back(Sent{std::move(commands), std::string(what)});
  return absl::OkStatus();
}

bool PgConn::TakeResult(Sent& t, pg_result* r) {
  if (r == nullptr) {
    if (!t.ending) return false;  // a command without a result: the connection is gone
    t.ending = false;
    ++t.index;
    return true;
  }
  const ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_PIPELINE_SYNC) {
    t.synced = true;
  } else if (!t.ending) {
    if (t.index >= 1 && t.index <= t.commands.size() && st == PGRES_TUPLES_OK && PQntuples(r) > 0 &&
        t.commands[t.index - 1].first_value != nullptr) {
      t.commands[t.index - 1].first_value->assign(PQgetvalue(r, 0, 0));
    }
    absl::Status s = ResultStatus(r, t.what);
    if (!s.ok() && t.first.ok()) t.first = s;
    t.ending = true;
  }  // else: a further result of the same command, ignored
  PQclear(r);
  return !broken_;
}

int PgConn::socket() const { return PQsocket(c_); }

bool PgConn::TransactionReady() {
  if (sent_.empty() || broken_) return true;
  if (PQconsumeInput(c_) != 1) {
    broken_ = true;
    return true;
  }
  Sent& t = sent_.front();
  while (!t.synced && PQisBusy(c_) == 0) {
    pg_result* r = PQgetResult(c_);
    if (r == nullptr && !t.ending) break;  // nothing more yet; FinishTransaction will tell
    if (!TakeResult(t, r)) return true;
  }
  return t.synced;
}

absl::Status PgConn::FinishTransaction() {
  if (sent_.empty()) return absl::InternalError("no pipelined transaction is in flight");
  // After a failure the rest of the results are PIPELINE_ABORTED.
  bool lost = broken_;
  while (!lost && !sent_.front().synced) lost = !TakeResult(sent_.front(), PQgetResult(c_));
  const Sent t = std::move(sent_.front());
  sent_.pop_front();
  if (lost) return ConnectionLost(t.what);
  absl::Status first = t.first;
  if (!sent_.empty()) return first;  // a failed transaction is rolled back below, at the last
  if (PQexitPipelineMode(c_) != 1) return ConnectionLost(t.what);
  if (PQtransactionStatus(c_) != PQTRANS_IDLE) {
    if (first.ok()) {
      first = absl::InternalError(absl::StrCat(t.what, ": the transaction did not end"));
    }
    (void)Exec("ROLLBACK", "rolling back");
  }
  return first;
}

}  // namespace paceline::store
