#include "store/postgres/pg_lease.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace paceline::store {
namespace {

std::string Interval(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Milliseconds(d), " milliseconds");
}

}  // namespace

absl::StatusOr<PgConn*> PgLease::Conn() {
  if (conn_ != nullptr && conn_->healthy()) return conn_.get();
  conn_.reset();
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> c, PgConn::Connect(url_, connect_timeout_));
  // Never wait long for the lease row: a stuck transaction elsewhere is not a reason to stall.
  RETURN_IF_ERROR(c->Exec("SET lock_timeout = '1s'; SET statement_timeout = '2s'",
                          "configuring the lease session"));
  conn_ = std::move(c);
  return conn_.get();
}

absl::StatusOr<std::optional<uint64_t>> PgLease::TryAcquire(const std::string& holder,
                                                            const std::string& address) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  ASSIGN_OR_RETURN(PgRows rows,
                   c->Query("UPDATE lease SET term = term + 1, holder = $1, address = $2, "
                            "renewed_at = now(), expires_at = now() + $3::interval "
                            "WHERE id = 1 AND (expires_at < now() OR holder = $1) RETURNING term",
                            {holder, address, Interval(duration_)}, "taking the leader lease"));
  if (rows.size() == 0) return std::nullopt;
  ASSIGN_OR_RETURN(int64_t term, rows.Int(0, 0, "lease term"));
  return static_cast<uint64_t>(term);
}

absl::Status PgLease::Renew(uint64_t term) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  ASSIGN_OR_RETURN(PgRows rows,
                   c->Query("UPDATE lease SET renewed_at = now(), "
                            "expires_at = now() + $2::interval WHERE id = 1 AND term = $1 "
                            "RETURNING term",
                            {absl::StrCat(term), Interval(duration_)}, "renewing the lease"));
  if (rows.size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("term ", term, " lost the leader lease to another master"));
  }
  return absl::OkStatus();
}

absl::Status PgLease::Release(uint64_t term) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  return c
      ->Query("UPDATE lease SET expires_at = '-infinity' WHERE id = 1 AND term = $1",
              {absl::StrCat(term)}, "releasing the lease")
      .status();
}

absl::StatusOr<LeaseInfo> PgLease::Read() {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  ASSIGN_OR_RETURN(PgRows rows, c->Query("SELECT term, holder, address, "
                                         "(EXTRACT(EPOCH FROM now() - renewed_at) * 1000)::bigint, "
                                         "expires_at > now() FROM lease WHERE id = 1",
                                         {}, "reading the lease"));
  if (rows.size() != 1) return absl::DataLossError("the lease row is missing");
  LeaseInfo info;
  ASSIGN_OR_RETURN(int64_t term, rows.Int(0, 0, "lease term"));
  info.term = static_cast<uint64_t>(term);
  info.holder = std::string(rows.Text(0, 1));
  info.address = std::string(rows.Text(0, 2));
  if (!rows.IsNull(0, 3)) {
    ASSIGN_OR_RETURN(int64_t ms, rows.Int(0, 3, "lease age"));
    info.since_renewal = absl::Milliseconds(ms);
  }
  info.live = rows.Text(0, 4) == "t";
  return info;
}

}  // namespace paceline::store
