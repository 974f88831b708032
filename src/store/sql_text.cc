// The SQL text of described tables (sql_text.h).

#include "store/sql_text.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::store::sql {
namespace {

constexpr absl::string_view kRev = "rev";
constexpr absl::string_view kCurrentRev = "currval('changes_rev')";

bool Revised(const Shape& t, Dialect d) { return d == Dialect::kPostgres && t.followed; }

std::vector<absl::string_view> Written(const Shape& t) {
  std::vector<absl::string_view> out;
  for (const Shape::Col& c : t.columns) {
    if (!c.generated) out.push_back(c.name);
  }
  return out;
}

// INSERT [OR REPLACE] INTO t (columns[, rev]) VALUES (...), (...)
std::string InsertHead(const Shape& t, Dialect d, int rows, bool replace) {
  std::vector<absl::string_view> cols = Written(t);
  const bool rev = Revised(t, d);
  std::string sql =
      absl::StrCat(replace && d == Dialect::kSqlite ? "INSERT OR REPLACE INTO " : "INSERT INTO ",
                   t.name, " (", absl::StrJoin(cols, ", "), rev ? ", rev" : "", ") VALUES ");
  int n = 0;
  for (int r = 0; r < rows; ++r) {
    absl::StrAppend(&sql, r == 0 ? "(" : ", (");
    for (size_t c = 0; c < cols.size(); ++c) {
      absl::StrAppend(&sql, c == 0 ? "" : ", ");
      if (d == Dialect::kSqlite) {
        sql.push_back('?');
      } else {
        absl::StrAppend(&sql, "$", ++n);
      }
    }
    absl::StrAppend(&sql, rev ? absl::StrCat(", ", kCurrentRev) : "", ")");
  }
  return sql;
}

// The type a column is declared with in dialect `d`, as the database lists it.
absl::string_view DeclaredType(Type type, Dialect d) {
  const bool lite = d == Dialect::kSqlite;
  switch (type) {
    case Type::kInt16:
      return lite ? "INTEGER" : "smallint";
    case Type::kInt32:
      return lite ? "INTEGER" : "integer";
    case Type::kInt64:
      return lite ? "INTEGER" : "bigint";
    case Type::kText:
      return lite ? "TEXT" : "text";
    case Type::kBlob:
      return lite ? "BLOB" : "bytea";
  }
  return "?";
}

}  // namespace

std::string SelectList(const Shape& t) {
  return absl::StrJoin(t.columns, ", ",
                       [](std::string* out, const Shape::Col& c) { out->append(c.name); });
}

std::string SelectSql(const Shape& t, Dialect d, absl::string_view where, bool order) {
  std::string sql = absl::StrCat("SELECT ", SelectList(t), " FROM ", t.name);
  if (!where.empty()) absl::StrAppend(&sql, " ", where);
  if (order) {
    absl::StrAppend(&sql, " ORDER BY ", t.order_by,
                    t.byte_order && d == Dialect::kPostgres ? " COLLATE \"C\"" : "");
  }
  return sql;
}

std::string InsertSql(const Shape& t, Dialect d, int rows) {
  return InsertHead(t, d, rows, /*replace=*/false);
}

std::string UpsertSql(const Shape& t, Dialect d, int rows) {
  std::string sql = InsertHead(t, d, rows, /*replace=*/true);
  if (d == Dialect::kSqlite) return sql;
  std::vector<std::string> sets;
  for (absl::string_view c : Written(t)) {
    if (std::find(t.key.begin(), t.key.end(), c) == t.key.end()) {
      sets.push_back(absl::StrCat(c, " = EXCLUDED.", c));
    }
  }
  if (Revised(t, d)) sets.push_back(absl::StrCat(kRev, " = EXCLUDED.", kRev));
  absl::StrAppend(&sql, " ON CONFLICT (", absl::StrJoin(t.key, ", "), ") DO UPDATE SET ",
                  absl::StrJoin(sets, ", "));
  return sql;
}

std::string CopySql(const Shape& t) {
  return absl::StrCat("COPY ", t.name, " (", absl::StrJoin(Written(t), ", "), ") FROM STDIN");
}

absl::Status CheckColumns(const Shape& t, Dialect d,
                          const std::vector<std::pair<std::string, std::string>>& actual) {
  std::vector<std::pair<absl::string_view, absl::string_view>> expected;
  for (const Shape::Col& c : t.columns) expected.emplace_back(c.name, DeclaredType(c.type, d));
  if (Revised(t, d)) expected.emplace_back(kRev, DeclaredType(Type::kInt64, d));
  std::vector<std::string> problems;
  for (const auto& [name, type] : expected) {
    auto it =
        std::find_if(actual.begin(), actual.end(), [&](const auto& a) { return a.first == name; });
    if (it == actual.end()) {
      problems.push_back(absl::StrCat("column ", name, " is missing"));
    } else if (!absl::EqualsIgnoreCase(it->second, type)) {
      problems.push_back(absl::StrCat("column ", name, " is ", it->second, ", expected ", type));
    }
  }
  for (const auto& [name, type] : actual) {
    if (std::none_of(expected.begin(), expected.end(),
                     [&](const auto& e) { return e.first == name; })) {
      problems.push_back(absl::StrCat("column ", name, " is not described"));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("store table ", t.name,
                   " does not have the columns this paceline reads and "
                   "writes (a schema migration is missing from schema.h?): ",
                   absl::StrJoin(problems, "; ")));
}

}  // namespace paceline::store::sql
