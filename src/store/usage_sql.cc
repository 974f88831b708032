// The usage table of the SQL stores (usage_sql.h).

#include "store/usage_sql.h"

#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::store {
namespace {

using records::UsageRecord;
using sql::Cell;
using sql::Column;
using sql::Type;
using sql::Value;

template <int64_t UsageRecord::*M>
Column<UsageRecord> Sum(const char* name) {
  return {name, Type::kInt64, [](const UsageRecord& r) -> Value { return r.*M; },
          [](const Cell& c, UsageRecord& r) {
            r.*M = c.i;
            return absl::OkStatus();
          }};
}
template <std::string UsageRecord::*M>
Column<UsageRecord> Str(const char* name) {
  return {name, Type::kText, [](const UsageRecord& r) -> Value { return r.*M; },
          [](const Cell& c, UsageRecord& r) {
            r.*M = std::string(c.s);
            return absl::OkStatus();
          }};
}

const std::array<Column<UsageRecord>, 10> kUsageColumns{
    Column<UsageRecord>{"hour_us", Type::kInt64,
                        [](const UsageRecord& r) -> Value { return absl::ToUnixMicros(r.hour); },
                        [](const Cell& c, UsageRecord& r) {
                          r.hour = absl::FromUnixMicros(c.i);
                          return absl::OkStatus();
                        }},
    Str<&UsageRecord::pool>("pool"),
    Column<UsageRecord>{
        "job", Type::kInt64,
        [](const UsageRecord& r) -> Value { return static_cast<int64_t>(r.job.value()); },
        [](const Cell& c, UsageRecord& r) {
          r.job = JobId(static_cast<uint64_t>(c.i));
          return absl::OkStatus();
        }},
    Str<&UsageRecord::owner>("owner"),
    Str<&UsageRecord::user>("user_name"),
    Str<&UsageRecord::job_name>("job_name"),
    Sum<&UsageRecord::cpu_milli_seconds>("cpu_milli_seconds"),
    Sum<&UsageRecord::memory_byte_seconds>("memory_byte_seconds"),
    Sum<&UsageRecord::gpu_milli_seconds>("gpu_milli_seconds"),
    Sum<&UsageRecord::tasks>("tasks"),
};
constexpr std::array<const char*, 5> kUsageKey{"hour_us", "pool", "job", "owner", "user_name"};
constexpr int kSumsFrom = 6;  // the columns added to: cpu, memory, gpu, tasks

std::string Placeholder(char marker, size_t n) { return absl::StrCat(std::string(1, marker), n); }

}  // namespace

const sql::Table<UsageRecord> kUsageTable{.name = "usage_hours",
                                          .columns = kUsageColumns,
                                          .key = kUsageKey,
                                          .order_by = "hour_us, pool, job, owner, user_name",
                                          .byte_order = false,
                                          .followed = false,
                                          .key_of = [](const UsageRecord& r) {
                                            return absl::StrCat(absl::ToUnixMicros(r.hour), " ",
                                                                r.pool, " ", r.job.value(), " ",
                                                                r.owner, " ", r.user);
                                          }};

std::string AddUsageSql(sql::Dialect d) {
  const char marker = d == sql::Dialect::kSqlite ? '?' : '$';
  std::vector<std::string> names, values, sets;
  for (size_t i = 0; i < kUsageColumns.size(); ++i) {
    names.push_back(kUsageColumns[i].name);
    values.push_back(Placeholder(marker, i + 1));
  }
  sets.push_back("job_name = excluded.job_name");
  for (size_t i = kSumsFrom; i < kUsageColumns.size(); ++i) {
    const char* c = kUsageColumns[i].name;
    sets.push_back(absl::StrCat(c, " = usage_hours.", c, " + excluded.", c));
  }
  return absl::StrCat("INSERT INTO usage_hours (", absl::StrJoin(names, ", "), ") VALUES (",
                      absl::StrJoin(values, ", "), ") ON CONFLICT (",
                      absl::StrJoin(kUsageKey, ", "), ") DO UPDATE SET ",
                      absl::StrJoin(sets, ", "));
}

std::string PruneUsageSql(sql::Dialect d) {
  return absl::StrCat("DELETE FROM usage_hours WHERE hour_us < ",
                      Placeholder(d == sql::Dialect::kSqlite ? '?' : '$', 1));
}

UsageSelect UsageSelectSql(const records::UsageQuery& q, char marker) {
  UsageSelect out;
  auto param = [&](std::variant<int64_t, std::string> v) {
    out.params.push_back(std::move(v));
    return Placeholder(marker, out.params.size());
  };
  std::vector<std::string> where;
  if (q.since != absl::InfinitePast()) {
    where.push_back(
        absl::StrCat("hour_us >= ", param(absl::ToUnixMicros(records::HourOf(q.since)))));
  }
  if (q.until != absl::InfiniteFuture()) {
    where.push_back(absl::StrCat("hour_us < ", param(absl::ToUnixMicros(q.until))));
  }
  if (!q.pool.empty()) {
    const std::string below = absl::EndsWith(q.pool, "/") ? q.pool : absl::StrCat(q.pool, "/");
    std::string pool = param(q.pool);
    std::string prefix = param(below);
    where.push_back(absl::StrCat("(pool = ", pool, " OR substr(pool, 1, length(CAST(", prefix,
                                 " AS TEXT))) = ", prefix, ")"));
  }
  out.sql = sql::SelectSql(
      sql::ShapeOf(kUsageTable), marker == '?' ? sql::Dialect::kSqlite : sql::Dialect::kPostgres,
      where.empty() ? "" : absl::StrCat("WHERE ", absl::StrJoin(where, " AND ")));
  return out;
}

}  // namespace paceline::store
