#pragma once
// OpenStore: the store a master or a tool names with one string (`--store`):
//   ""                          SQLite in <data_dir>/paceline.db (the embedded default)
//   "sqlite:PATH"               SQLite in the directory PATH (or PATH/paceline.db)
//   "postgres://…", "postgresql://…"
//                               PostgreSQL (libpq connection URL; see docs/operations.md)
//   "memory"                    nothing durable (tests, the simulator)
// Anything else is INVALID_ARGUMENT naming the forms above.
//
// Thread-safety: a free function; the store it returns is used from one thread at a time.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace paceline::store {

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& spec,
                                                 const std::string& data_dir);

// True for "postgres://…" and "postgresql://…".
bool IsPostgresUrl(const std::string& spec);

}  // namespace paceline::store
