#pragma once
// The SQL text of a described table (sql_table.h) in each dialect: the SELECT that reads its
// rows, the INSERT or upsert that writes one row or many, PostgreSQL's COPY, and the check that
// a database's columns are the described ones.
//
//   SQLite      upsert: INSERT OR REPLACE ... VALUES (?, ...)
//   PostgreSQL  upsert: INSERT ... VALUES ($1, ..., currval('changes_rev')) ON CONFLICT (key)
//               DO UPDATE SET each non-key column and rev; a followed table (Table::followed)
//               has a `rev` column that every write sets to the commit's revision (schema.h)
//
// Thread-safety: pure functions.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "store/sql_table.h"

namespace paceline::store::sql {

enum class Dialect { kSqlite, kPostgres };

// A table's description without its codecs: what the text depends on.
struct Shape {
  struct Col {
    const char* name;
    Type type;
    bool generated;
  };
  const char* name;
  std::vector<Col> columns;
  std::span<const char* const> key;
  const char* order_by;
  bool byte_order;
  bool followed;
};

template <typename Record, typename Row>
Shape ShapeOf(const Table<Record, Row>& t) {
  Shape s{t.name, {}, t.key, t.order_by, t.byte_order, t.followed};
  for (const Column<Record, Row>& c : t.columns)
    s.columns.push_back({c.name, c.type, c.generated()});
  return s;
}

// "a, b, c": every column, generated ones included, in order (what the decoders read).
std::string SelectList(const Shape& t);
// SELECT <every column> FROM <table> <where> ORDER BY <order>; `where` may be empty, and may
// end with the ORDER BY's replacement when `order` is false.
std::string SelectSql(const Shape& t, Dialect d, absl::string_view where = "", bool order = true);
// Writes `rows` rows (PostgreSQL only: SQLite writes one) of the written columns; an upsert
// replaces a row with the same key. Parameters are numbered row by row.
std::string UpsertSql(const Shape& t, Dialect d, int rows = 1);
std::string InsertSql(const Shape& t, Dialect d, int rows = 1);
// PostgreSQL: COPY <table> (<written columns>) FROM STDIN.
std::string CopySql(const Shape& t);

// OK when `actual` (each column's name and declared type, as the database lists them) is
// exactly the described columns, with their types in dialect `d` (and PostgreSQL's `rev` on a
// followed table); else FAILED_PRECONDITION naming the table and what differs.
absl::Status CheckColumns(const Shape& t, Dialect d,
                          const std::vector<std::pair<std::string, std::string>>& actual);

}  // namespace paceline::store::sql
