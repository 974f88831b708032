#include "store/postgres/postgres_store.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/random_bytes.h"
#include "common/status.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/postgres_write.h"
#include "store/postgres/schema.h"
#include "store/postgres/task_migration.h"
#include "store/sql_tables.h"

namespace paceline::store {
namespace {

// Any fixed number: the advisory lock that serialises migrations of masters starting together.
constexpr int64_t kMigrationLock = 0x7061'6365'6c69'6e65;  // "paceline"

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                                   const PostgresOptions& options) {
  std::unique_ptr<PostgresStore> store(new PostgresStore(url, options));
  RETURN_IF_ERROR(store->Conn().status());
  RETURN_IF_ERROR(WithContext(store->Migrate(), absl::StrCat("store ", store->Describe())));
  return store;
}

std::string PostgresStore::Describe() const { return RedactPassword(url_); }

absl::StatusOr<PgConn*> PostgresStore::Conn() {
  if (conn_ != nullptr && conn_->healthy()) return conn_.get();
  conn_.reset();
  committed_link_ = 0;  // a new session has no link
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> c, PgConn::Connect(url_, options_.connect_timeout));
  // A transaction left open by a paused or partitioned master must not hold the lease row (or
  // any other) for long: PostgreSQL ends such a session after this.
  RETURN_IF_ERROR(
      c->Exec("SET client_min_messages = warning; "
              "SET idle_in_transaction_session_timeout = '5s'",
              "configuring the session"));
  conn_ = std::move(c);
  return conn_.get();
}

absl::StatusOr<std::string> PostgresStore::GetMeta(const std::string& key) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  ASSIGN_OR_RETURN(PgRows rows, c->Query("SELECT value FROM meta WHERE key = $1", {key},
                                         absl::StrCat("reading ", key)));
  return rows.size() == 0 ? std::string() : std::string(rows.Text(0, 0));
}

absl::Status PostgresStore::Migrate() {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  RETURN_IF_ERROR(c->Exec("BEGIN", "migrating the schema"));
  absl::Status s = [&]() -> absl::Status {
    RETURN_IF_ERROR(c->Query("SELECT pg_advisory_xact_lock($1)", {absl::StrCat(kMigrationLock)},
                             "waiting for other masters' migrations")
                        .status());
    ASSIGN_OR_RETURN(PgRows exists, c->Query("SELECT to_regclass('meta') IS NOT NULL", {},
                                             "looking for the schema"));
    int version = 0;
    if (exists.Text(0, 0) == "t") {
      ASSIGN_OR_RETURN(std::string text, GetMeta("schema_version"));
      if (!text.empty() && !absl::SimpleAtoi(text, &version)) {
        return absl::DataLossError(absl::StrCat("schema_version '", text, "' is not a number"));
      }
    }
    if (version > pg::kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the database has schema version ", version, " but this paceline knows up to ",
          pg::kSchemaVersion, "; run a newer paceline"));
    }
    auto put = [&](const std::string& key, const std::string& value) {
      return c->Query(pg::kPutMetaSql, {key, value}, absl::StrCat("writing ", key)).status();
    };
    if (version < 1) {
      RETURN_IF_ERROR(c->Exec(pg::kSchemaV1, "creating the schema (version 1)"));
      ASSIGN_OR_RETURN(std::string cluster_id, RandomHex(8));
      RETURN_IF_ERROR(put("cluster_id", cluster_id));
      RETURN_IF_ERROR(put("next_job_id", "1"));
    }
    for (const pg::Migration& m : pg::kMigrations) {
      if (version >= m.version) continue;
      RETURN_IF_ERROR(c->Exec(m.sql, absl::StrCat("migrating to schema version ", m.version)));
      if (m.version == pg::kTaskBlobsVersion) RETURN_IF_ERROR(pg::MoveTasksIntoBlobs(*c));
    }
    RETURN_IF_ERROR(put("schema_version", absl::StrCat(pg::kSchemaVersion)));
    for (const sql::Shape& t : PgTableShapes()) RETURN_IF_ERROR(pg::CheckPgTable(*c, t));
    ASSIGN_OR_RETURN(std::string opens, GetMeta("open_count"));
    int64_t n = 0;
    if (!opens.empty() && !absl::SimpleAtoi(opens, &n)) {
      return absl::DataLossError(absl::StrCat("open_count '", opens, "' is not a number"));
    }
    open_count_ = n + 1;
    RETURN_IF_ERROR(put("open_count", absl::StrCat(open_count_)));
    ASSIGN_OR_RETURN(cluster_id_, GetMeta("cluster_id"));
    return c->Exec("COMMIT", "committing the schema");
  }();
  if (!s.ok() && c->healthy()) (void)c->Exec("ROLLBACK", "rolling back the migration");
  return s;
}

absl::Status PostgresStore::CommitAll(const std::vector<const records::WriteBatch*>& batches) {
  if (!in_flight_.empty()) {
    return absl::FailedPreconditionError("CommitAll while pipelined commits are in flight");
  }
  RETURN_IF_ERROR(SendCommit(batches));
  return FinishCommit();
}

absl::Status PostgresStore::SendCommit(const std::vector<const records::WriteBatch*>& batches) {
  if (in_flight_.size() >= static_cast<size_t>(MaxCommitsInFlight())) {
    return absl::FailedPreconditionError("too many commits in flight");
  }
  PgConn* c = conn_.get();
  if (in_flight_.empty()) {  // never reconnects under a commit in flight
    ASSIGN_OR_RETURN(c, Conn());
  }
  RETURN_IF_ERROR(pg::PrepareWrites(*c));
  auto f = std::make_unique<InFlight>();
  f->link = ++next_link_;
  const uint64_t after = in_flight_.empty() ? committed_link_ : in_flight_.back()->link;
  std::optional<int64_t> compact = std::exchange(compact_before_, std::nullopt);
  if (!compact) compact = compaction_.Due(absl::Now());
  pg::PgWrite write =
      pg::WriteCommands(batches, fence_term_,
                        {after == 0 ? "" : absl::StrCat(after), absl::StrCat(f->link)}, compact);
  write.commands[write.revision_command].first_value = &f->revision;
  for (const records::WriteBatch* b : batches) {
    if (b->cluster_id) f->cluster_id = b->cluster_id;
    f->followed = f->followed || pg::WritesFollowedRows(*b);
  }
  RETURN_IF_ERROR(c->SendTransaction(std::move(write.commands), "committing to the store"));
  in_flight_.push_back(std::move(f));
  return absl::OkStatus();
}

absl::Status PostgresStore::FinishCommit() {
  if (in_flight_.empty()) return absl::FailedPreconditionError("no commit in flight");
  std::unique_ptr<InFlight> f = std::move(in_flight_.front());
  in_flight_.pop_front();
  RETURN_IF_ERROR(conn_->FinishTransaction());
  committed_link_ = f->link;
  if (f->cluster_id) cluster_id_ = *f->cluster_id;
  int64_t rev = 0;
  if (f->followed && absl::SimpleAtoi(f->revision, &rev)) {
    committed_revision_.store(rev, std::memory_order_release);
    compaction_.Note(absl::Now(), rev);
  }
  return absl::OkStatus();
}

}  // namespace paceline::store
