#include "store/open_store.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/memory_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::store {

bool IsPostgresUrl(const std::string& spec) {
  return absl::StartsWith(spec, "postgres://") || absl::StartsWith(spec, "postgresql://");
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& spec,
                                                 const std::string& data_dir) {
  if (spec.empty()) return SqliteStore::Open(data_dir);
  if (absl::StartsWith(spec, "sqlite:")) {
    std::string path = spec.substr(7);
    // The database file itself (as Describe() prints it) names its directory.
    if (absl::EndsWith(path, SqliteStore::kFileName)) {
      path.resize(path.size() - std::string(SqliteStore::kFileName).size());
      if (path.empty()) path = ".";
    }
    if (path.empty()) return absl::InvalidArgumentError("--store sqlite: needs a directory");
    return SqliteStore::Open(path);
  }
  if (IsPostgresUrl(spec)) return PostgresStore::Open(spec);
  if (spec == "memory") return std::make_unique<MemoryStore>();
  return absl::InvalidArgumentError(absl::StrCat(
      "--store '", spec, "': expected sqlite:DIR, postgres://USER@HOST:PORT/DATABASE or memory"));
}

}  // namespace paceline::store
