#include "store/sqlite/sqlite_store.h"

#include <filesystem>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"

namespace paceline::store {
namespace {

std::string RandomHexId() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create data directory ", data_dir, ": ", ec.message()));
  }
  std::string path = (std::filesystem::path(data_dir) / kFileName).string();
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db)));
  RETURN_IF_ERROR(WithContext(store->Migrate(), absl::StrCat("store ", path)));
  return store;
}

std::string SqliteStore::Describe() const { return absl::StrCat("sqlite:", db_->path()); }

absl::Status SqliteStore::Migrate() {
  RETURN_IF_ERROR(
      db_->Exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"));
  ASSIGN_OR_RETURN(std::string version_text, GetMeta("schema_version"));
  int version = 0;
  if (!version_text.empty() && !absl::SimpleAtoi(version_text, &version)) {
    return absl::DataLossError(absl::StrCat("schema_version '", version_text, "' is not a number"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the store has schema version ", version,
                                                      " but this paceline knows up to ",
                                                      kSchemaVersion, "; run a newer paceline"));
  }
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  absl::Status s = [&]() -> absl::Status {
    if (version < 1) {
      RETURN_IF_ERROR(PutMeta("cluster_id", RandomHexId()));
      RETURN_IF_ERROR(PutMeta("schema_version", "1"));
    }
    ASSIGN_OR_RETURN(std::string opens, GetMeta("open_count"));
    int64_t n = 0;
    (void)absl::SimpleAtoi(opens, &n);
    open_count_ = n + 1;
    return PutMeta("open_count", absl::StrCat(open_count_));
  }();
  if (!s.ok()) {
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  RETURN_IF_ERROR(db_->Exec("COMMIT"));
  ASSIGN_OR_RETURN(cluster_id_, GetMeta("cluster_id"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteStore::GetMeta(absl::string_view key) {
  ASSIGN_OR_RETURN(Statement stmt, db_->Prepare("SELECT value FROM meta WHERE key = ?"));
  stmt.Bind(1, key);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnText(0) : std::string();
}

absl::Status SqliteStore::PutMeta(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(Statement stmt,
                   db_->Prepare("INSERT INTO meta (key, value) VALUES (?, ?) "
                                "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  stmt.Bind(1, key).Bind(2, value);
  return stmt.Run();
}

}  // namespace paceline::store
