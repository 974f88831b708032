#pragma once
// SqliteStore: the embedded, durable store of the master (the default backend).
//
// Lives in one file, <data_dir>/paceline.db, in WAL mode with synchronous=FULL, so a commit that
// returned is on disk. Open() creates the directory and the database when missing and migrates
// the schema forward (the schema version is kept in the `meta` table); a database written by a
// newer Paceline is refused rather than guessed at.
//
// Thread-safety: not thread-safe; the master gives it to one writer thread.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/sqlite/db.h"

namespace paceline::store {

class SqliteStore {
 public:
  static constexpr int kSchemaVersion = 1;
  static constexpr const char* kFileName = "paceline.db";

  // Opens (creating when missing) the store under `data_dir`.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& data_dir);

  // A random id given to the cluster when its store was created; stable across restarts.
  const std::string& cluster_id() const { return cluster_id_; }
  // "sqlite:<path>".
  std::string Describe() const;
  // How many times a master has opened this store (1 on a fresh store).
  int64_t open_count() const { return open_count_; }

 private:
  explicit SqliteStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status Migrate();
  absl::StatusOr<std::string> GetMeta(absl::string_view key);
  absl::Status PutMeta(absl::string_view key, absl::string_view value);

  std::unique_ptr<SqliteDb> db_;
  std::string cluster_id_;
  int64_t open_count_ = 0;
};

}  // namespace paceline::store
