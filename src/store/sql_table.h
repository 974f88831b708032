#pragma once
// A record's table in the SQL stores, described once: its columns in order (name, type, how a
// record's field becomes a value and a stored value becomes the field again), its key and its
// order. Both SQL backends read these descriptions (sql_tables.h holds them) and from them make
// their SELECT lists, inserts and upserts (sql_text.h), bind the values and decode the rows
// (sqlite/sqlite_rows.h, postgres/pg_rows.h), and check at every open that the database's
// columns are the described ones (a migration left out fails every open and every test).
//
// The DDL is the schema's history (the `schema.h` of each backend): a table is created, and a
// column added, by an explicit migration per dialect, never by code that changes with the
// description. Adding a column to a record is therefore one edit here and one migration per
// dialect.
//
//   record ──encode──▶ Value (NULL | integer | text) ──bind──▶ statement
//   row    ──read────▶ Cell  (null, integer or text) ──decode─▶ record
//
// A decoder's error names the problem; the backend returns it as BadRow (bad_row.h) naming the
// table and the row's key. An integer column that does not hold an integer is DATA_LOSS naming
// the table and column, before any decoder runs.
//
// Thread-safety: descriptions are immutable values; every function is pure.

#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace paceline::store::sql {

// What a column holds. SQLite declares every integer INTEGER; PostgreSQL sizes them.
enum class Type { kInt16, kInt32, kInt64, kText, kBlob };

// One value to bind: NULL, an integer, or text (bytes for a BLOB column).
using Value = std::variant<std::monostate, int64_t, std::string>;

// One stored value as a decoder reads it: `i` for an integer column, `s` for text and blobs
// (valid during the decoder's call only).
struct Cell {
  bool null = false;
  int64_t i = 0;
  absl::string_view s;
};

template <typename Record, typename Row = Record>
struct Column {
  const char* name;
  Type type;
  // The field's value; nullptr for a column the database fills (a sequence).
  Value (*encode)(const Record&);
  absl::Status (*decode)(const Cell&, Row&);
  bool generated() const { return encode == nullptr; }
};

// A table: `Record` is what is written, `Row` what one row is read into (a record, or a record
// with parts left for later, such as a job's spec text).
template <typename Record, typename Row = Record>
struct Table {
  const char* name;
  std::span<const Column<Record, Row>> columns;
  // The primary key (the conflict target of an upsert).
  std::span<const char* const> key;
  // The order in which rows are read; `byte_order` sorts this text column by bytes whatever the
  // database's collation (as the memory store and SQLite sort).
  const char* order_by;
  bool byte_order = false;
  // Whether standbys follow the table by its `rev` column (PostgreSQL, schema.h version 2).
  // PostgreSQL's tasks are followed otherwise (task_changes, schema.h version 10).
  bool followed = true;
  // The row's key, as BadRow names it.
  std::string (*key_of)(const Row&);
};

// Helpers for descriptions: times are microseconds since the Unix epoch, NULL standing for
// `null_means` (InfinitePast: "never happened"; InfiniteFuture: "never will").
inline Value TimeValue(absl::Time t, absl::Time null_means = absl::InfinitePast()) {
  if (t == null_means) return std::monostate{};
  return absl::ToUnixMicros(t);
}
inline absl::Time TimeOf(const Cell& c, absl::Time null_means = absl::InfinitePast()) {
  return c.null ? null_means : absl::FromUnixMicros(c.i);
}

}  // namespace paceline::store::sql
