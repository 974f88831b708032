#pragma once
// Described tables (sql_table.h) on SQLite: binding a record's columns to a statement, decoding
// a row of SelectSql's columns, and checking a table's columns at open.
//
// Thread-safety: as the statement's and connection's (one thread at a time).

#include "store/bad_row.h"
#include "store/sql_table.h"
#include "store/sql_text.h"
#include "store/sqlite/db.h"

namespace paceline::store {

// Binds the written columns of `r`, in order, from parameter `first`.
template <typename Record, typename Row>
void BindRow(Statement& st, const sql::Table<Record, Row>& t, const Record& r, int first = 1) {
  int i = first;
  for (const sql::Column<Record, Row>& c : t.columns) {
    if (c.generated()) continue;
    sql::Value v = c.encode(r);
    if (const int64_t* n = std::get_if<int64_t>(&v)) {
      st.Bind(i, *n);
    } else if (const std::string* s = std::get_if<std::string>(&v)) {
      if (c.type == sql::Type::kBlob) {
        st.BindBlob(i, *s);
      } else {
        st.Bind(i, *s);
      }
    } else {
      st.BindNull(i);
    }
    ++i;
  }
}

// Decodes the row `st` stands on, whose columns are SelectList(t)'s, into `row`.
template <typename Record, typename Row>
absl::Status ReadRow(const Statement& st, const sql::Table<Record, Row>& t, Row& row) {
  int i = 0;
  for (const sql::Column<Record, Row>& c : t.columns) {
    sql::Cell cell;
    cell.null = st.ColumnIsNull(i);
    if (c.type == sql::Type::kText) {
      cell.s = st.ColumnView(i);
    } else if (c.type == sql::Type::kBlob) {
      cell.s = st.ColumnBlob(i);
    } else {
      cell.i = st.ColumnInt(i);
    }
    if (absl::Status s = c.decode(cell, row); !s.ok()) {
      return BadRow(t.name, t.key_of(row), s.message());
    }
    ++i;
  }
  return absl::OkStatus();
}

// Whether the table `t` of `db` has exactly the described columns (sql_text.h, CheckColumns).
absl::Status CheckSqliteTable(SqliteDb& db, const sql::Shape& t);

}  // namespace paceline::store
