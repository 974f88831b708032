#pragma once
// A record that exists only in tests, described as sql_table.h describes the store's records, at
// two versions: kWidgetsV2 adds one column (`color`) to kWidgetsV1, the one edit that adding a
// field to a record takes, and each dialect adds the column to the database with one explicit
// migration (kAddColor*). The schema tests of both backends use it to show that this is all it
// takes: the statements, binding and decoding follow the description.
//
// Thread-safety: immutable.

#include <array>
#include <string>

#include "absl/status/status.h"
#include "store/sql_table.h"

namespace paceline::store::testing {

struct Widget {
  std::string name;
  int64_t size = 0;
  std::string color;
  friend bool operator==(const Widget&, const Widget&) = default;
};

inline constexpr sql::Column<Widget> kWidgetName{
    "name", sql::Type::kText, [](const Widget& w) -> sql::Value { return w.name; },
    [](const sql::Cell& c, Widget& w) {
      w.name = std::string(c.s);
      return absl::OkStatus();
    }};
inline constexpr sql::Column<Widget> kWidgetSize{
    "size", sql::Type::kInt64, [](const Widget& w) -> sql::Value { return w.size; },
    [](const sql::Cell& c, Widget& w) {
      w.size = c.i;
      return absl::OkStatus();
    }};
inline constexpr sql::Column<Widget> kWidgetColor{
    "color", sql::Type::kText, [](const Widget& w) -> sql::Value { return w.color; },
    [](const sql::Cell& c, Widget& w) {
      w.color = std::string(c.s);
      return absl::OkStatus();
    }};

inline constexpr std::array kWidgetColumnsV1{kWidgetName, kWidgetSize};
inline constexpr std::array kWidgetColumnsV2{kWidgetName, kWidgetSize, kWidgetColor};
inline constexpr const char* kWidgetKey[] = {"name"};

inline constexpr sql::Table<Widget> kWidgetsV1{.name = "widgets",
                                               .columns = kWidgetColumnsV1,
                                               .key = kWidgetKey,
                                               .order_by = "name",
                                               .followed = false,
                                               .key_of = [](const Widget& w) { return w.name; }};
inline constexpr sql::Table<Widget> kWidgetsV2{.name = "widgets",
                                               .columns = kWidgetColumnsV2,
                                               .key = kWidgetKey,
                                               .order_by = "name",
                                               .followed = false,
                                               .key_of = [](const Widget& w) { return w.name; }};

// The table's history in each dialect: created at version 1, `color` added at version 2.
inline constexpr const char* kCreateWidgetsSqlite =
    "CREATE TABLE widgets (name TEXT PRIMARY KEY, size INTEGER NOT NULL)";
inline constexpr const char* kAddColorSqlite =
    "ALTER TABLE widgets ADD COLUMN color TEXT NOT NULL DEFAULT ''";
inline constexpr const char* kCreateWidgetsPg =
    "CREATE TABLE widgets (name TEXT PRIMARY KEY, size BIGINT NOT NULL)";
inline constexpr const char* kAddColorPg =
    "ALTER TABLE widgets ADD COLUMN color TEXT NOT NULL DEFAULT ''";

}  // namespace paceline::store::testing
