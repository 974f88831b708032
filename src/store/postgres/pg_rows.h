#pragma once
// Described tables (sql_table.h) on PostgreSQL: a record's columns as a statement's parameters,
// the decoding of a row of SelectSql's columns, and the check of a table's columns at open.
//
// Thread-safety: as the connection's (one thread at a time).

#include <string>
#include <variant>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "store/bad_row.h"
#include "store/postgres/pg_conn.h"
#include "store/sql_table.h"
#include "store/sql_text.h"

namespace paceline::store::pg {

// The written columns of `r`, in order, in PostgreSQL's text format (nullopt: NULL; bytea as
// \x and hex, as ReadRow reads it back).
template <typename Record, typename Row>
PgParams ParamsOf(const sql::Table<Record, Row>& t, const Record& r) {
  PgParams out;
  out.reserve(t.columns.size());
  for (const sql::Column<Record, Row>& c : t.columns) {
    if (c.generated()) continue;
    sql::Value v = c.encode(r);
    if (int64_t* n = std::get_if<int64_t>(&v)) {
      out.emplace_back(absl::StrCat(*n));
    } else if (std::string* s = std::get_if<std::string>(&v)) {
      // bytea in the text format: \x and the bytes in hex.
      out.emplace_back(c.type == sql::Type::kBlob ? absl::StrCat("\\x", absl::BytesToHexString(*s))
                                                  : std::move(*s));
    } else {
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

// Decodes row `row` of `rows`, whose columns are SelectList(t)'s, into `out`.
template <typename Record, typename Row>
absl::Status ReadRow(const PgRows& rows, int row, const sql::Table<Record, Row>& t, Row& out) {
  int i = 0;
  std::string bytes;  // a bytea column's, decoded
  for (const sql::Column<Record, Row>& c : t.columns) {
    sql::Cell cell;
    cell.null = rows.IsNull(row, i);
    if (c.type == sql::Type::kBlob) {
      absl::string_view hex = rows.Text(row, i);
      if (!absl::ConsumePrefix(&hex, "\\x") || hex.size() % 2 != 0 ||
          !absl::c_all_of(hex, [](char ch) { return absl::ascii_isxdigit(ch); })) {
        return BadRow(t.name, t.key_of(out), absl::StrCat("column ", i, " is not bytea in hex"));
      }
      bytes = absl::HexStringToBytes(hex);
      cell.s = bytes;
    } else if (c.type == sql::Type::kText) {
      cell.s = rows.Text(row, i);
    } else if (!cell.null) {
      absl::StatusOr<int64_t> n =
          rows.Int(row, i, absl::StrCat("store table ", t.name, ", column ", i));
      if (!n.ok()) return n.status();
      cell.i = *n;
    }
    if (absl::Status s = c.decode(cell, out); !s.ok()) {
      return BadRow(t.name, t.key_of(out), s.message());
    }
    ++i;
  }
  return absl::OkStatus();
}

// Every row of `rows` decoded and appended to `out`.
template <typename Record>
absl::Status ReadRows(const PgRows& rows, const sql::Table<Record>& t, std::vector<Record>& out) {
  out.reserve(out.size() + static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    Record r;
    if (absl::Status s = ReadRow(rows, i, t, r); !s.ok()) return s;
    out.push_back(std::move(r));
  }
  return absl::OkStatus();
}

// Whether the table `t` has exactly the described columns (sql_text.h, CheckColumns).
absl::Status CheckPgTable(PgConn& c, const sql::Shape& t);

}  // namespace paceline::store::pg
