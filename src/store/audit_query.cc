#include "store/audit_query.h"

#include <algorithm>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/sql_tables.h"
#include "store/sql_text.h"

namespace paceline::store {
namespace {

// The prefix of every pool strictly below `subtree`: "/ads/" for "/ads", "/" for "/".
std::string PoolsBelow(absl::string_view subtree) {
  if (absl::EndsWith(subtree, "/")) return std::string(subtree);
  return absl::StrCat(subtree, "/");
}

}  // namespace

bool InPoolSubtree(absl::string_view subtree, absl::string_view pool) {
  return pool == subtree || absl::StartsWith(pool, PoolsBelow(subtree));
}

bool AuditMatches(const records::AuditRecord& r, const records::AuditQuery& q) {
  if (!q.user.empty() && r.user != q.user) return false;
  if (!q.pool.empty() && !InPoolSubtree(q.pool, r.pool)) return false;
  if (r.at < q.since) return false;
  return q.before_seq == 0 || r.seq < q.before_seq;
}

AuditSelect AuditSelectSql(const records::AuditQuery& q, char marker) {
  AuditSelect out;
  // The placeholder of a new parameter of value `v`.
  auto param = [&](std::variant<int64_t, std::string> v) {
    out.params.push_back(std::move(v));
    return absl::StrCat(std::string(1, marker), out.params.size());
  };
  std::vector<std::string> where;
  if (!q.user.empty()) where.push_back(absl::StrCat("user_name = ", param(q.user)));
  if (!q.pool.empty()) {
    std::string pool = param(q.pool);
    std::string below = param(PoolsBelow(q.pool));
    where.push_back(absl::StrCat("(pool = ", pool, " OR substr(pool, 1, length(CAST(", below,
                                 " AS TEXT))) = ", below, ")"));
  }
  if (q.since != absl::InfinitePast()) {
    where.push_back(absl::StrCat("at_us >= ", param(absl::ToUnixMicros(q.since))));
  }
  if (q.before_seq != 0) where.push_back(absl::StrCat("seq < ", param(q.before_seq)));
  constexpr size_t kMaxLimit = std::numeric_limits<int64_t>::max();
  int64_t limit = static_cast<int64_t>(std::min(q.limit, kMaxLimit));
  static const std::string kSelect =
      absl::StrCat("SELECT ", sql::SelectList(sql::ShapeOf(kAuditTable)), " FROM audit");
  out.sql = absl::StrCat(kSelect, where.empty() ? "" : " WHERE ", absl::StrJoin(where, " AND "),
                         " ORDER BY seq DESC LIMIT ", param(limit));
  return out;
}

}  // namespace paceline::store
