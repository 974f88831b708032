// The tables of the SQL stores (sql_tables.h).

#include "store/sql_tables.h"

#include <array>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/event_block.h"
#include "store/row_codec.h"
#include "store/task_row.h"
#include "store/usage_sql.h"

namespace paceline::store {
namespace {

using sql::Cell;
using sql::Column;
using sql::Type;
using sql::Value;

// Columns that hold one field as it is: `M` is the field (of the record, which the row is or
// derives from).
template <typename T>
struct MemberOf;
template <typename C, typename F>
struct MemberOf<F C::*> {
  using Class = C;
  using Field = F;
};
template <auto M>
using ClassOf = typename MemberOf<decltype(M)>::Class;
template <auto M>
using FieldOf = typename MemberOf<decltype(M)>::Field;

template <auto M>
Value EncodeText(const ClassOf<M>& r) {
  return std::string(r.*M);
}
template <auto M, typename Row>
absl::Status DecodeText(const Cell& c, Row& r) {
  r.*M = std::string(c.s);
  return absl::OkStatus();
}
template <auto M, typename Row = ClassOf<M>>
constexpr Column<ClassOf<M>, Row> Text(const char* name) {
  return {name, Type::kText, &EncodeText<M>, &DecodeText<M, Row>};
}

template <auto M>
Value EncodeInt(const ClassOf<M>& r) {
  return static_cast<int64_t>(r.*M);
}
template <auto M, typename Row>
absl::Status DecodeInt(const Cell& c, Row& r) {
  r.*M = static_cast<FieldOf<M>>(c.i);
  return absl::OkStatus();
}
template <auto M, typename Row = ClassOf<M>>
constexpr Column<ClassOf<M>, Row> Int(const char* name, Type type = Type::kInt64) {
  return {name, type, &EncodeInt<M>, &DecodeInt<M, Row>};
}

// Times: NULL is "never happened" (InfinitePast), or with `Never`, "never will"
// (InfiniteFuture: a token that does not expire, or was not revoked).
template <auto M, bool kNever>
Value EncodeTime(const ClassOf<M>& r) {
  return sql::TimeValue(r.*M, kNever ? absl::InfiniteFuture() : absl::InfinitePast());
}
template <auto M, bool kNever, typename Row>
absl::Status DecodeTime(const Cell& c, Row& r) {
  r.*M = sql::TimeOf(c, kNever ? absl::InfiniteFuture() : absl::InfinitePast());
  return absl::OkStatus();
}
template <auto M, bool kNever = false, typename Row = ClassOf<M>>
constexpr Column<ClassOf<M>, Row> Time(const char* name) {
  return {name, Type::kInt64, &EncodeTime<M, kNever>, &DecodeTime<M, kNever, Row>};
}
template <auto M>
constexpr Column<ClassOf<M>> NeverTime(const char* name) {
  return Time<M, true>(name);
}

absl::StatusOr<TaskState> StateOf(int64_t v) {
  if (v < 0 || v >= kNumTaskStates) {
    return absl::DataLossError(absl::StrCat("unknown state ", v));
  }
  return static_cast<TaskState>(v);
}

// A run's ports as PostgreSQL keeps them: decimal numbers separated by commas ("" for none).
std::string EncodePorts(const std::vector<uint16_t>& ports) {
  std::string out;
  for (uint16_t p : ports) absl::StrAppend(&out, out.empty() ? "" : ",", p);
  return out;
}
absl::StatusOr<std::vector<uint16_t>> DecodePorts(absl::string_view text) {
  std::vector<uint16_t> out;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t p = 0;
    if (!absl::SimpleAtoi(part, &p) || p > 65535) {
      return absl::DataLossError(
          absl::StrCat("ports: '", text, "' is not a list of port numbers separated by commas"));
    }
    out.push_back(static_cast<uint16_t>(p));
  }
  return out;
}

// The key of a row as BadRow names it.
template <typename R>
std::string TaskKey(const R& t) {
  return t.id.ToString();
}

// --- pools ---
using records::PoolRecord;
constexpr std::array kPoolColumns{
    Text<&PoolRecord::path>("path"),
    Column<PoolRecord>{"spec", Type::kText,
                       [](const PoolRecord& p) -> Value { return PrintPoolSpec(p.spec); },
                       [](const Cell& c, PoolRecord& p) -> absl::Status {
                         ASSIGN_OR_RETURN(p.spec, ParsePoolSpec(c.s, "stored pool spec"));
                         return absl::OkStatus();
                       }},
};
constexpr const char* kPathKey[] = {"path"};

// --- jobs ---
using records::JobRecord;
constexpr std::array kJobColumns{
    Column<JobRecord, JobRow>{
        "id", Type::kInt64,
        [](const JobRecord& j) -> Value { return static_cast<int64_t>(j.id.value()); },
        [](const Cell& c, JobRow& j) {
          j.id = JobId(static_cast<uint64_t>(c.i));
          return absl::OkStatus();
        }},
    Text<&JobRecord::pool, JobRow>("pool"),
    // Parsed later, on several threads (spec_parsing.h).
    Column<JobRecord, JobRow>{"spec", Type::kText,
                              [](const JobRecord& j) -> Value { return PrintJobSpec(j.spec); },
                              [](const Cell& c, JobRow& j) {
                                j.spec_text = std::string(c.s);
                                return absl::OkStatus();
                              }},
    Int<&JobRecord::version, JobRow>("version"),
    Int<&JobRecord::goal, JobRow>("goal", Type::kInt16),
    Time<&JobRecord::created_at, false, JobRow>("created_us"),
    Column<JobRecord, JobRow>{
        "old_specs", Type::kText,
        [](const JobRecord& j) -> Value { return EncodeOldSpecs(j.old_specs); },
        [](const Cell& c, JobRow& j) -> absl::Status {
          ASSIGN_OR_RETURN(j.old_specs, DecodeOldSpecs(std::string(c.s)));
          return absl::OkStatus();
        }},
    Column<JobRecord, JobRow>{"updates", Type::kText,
                              [](const JobRecord& j) -> Value { return EncodeUpdates(j.updates); },
                              [](const Cell& c, JobRow& j) -> absl::Status {
                                ASSIGN_OR_RETURN(j.updates, DecodeUpdates(std::string(c.s)));
                                return absl::OkStatus();
                              }},
    Int<&JobRecord::instances, JobRow>("instances"),
    Text<&JobRecord::owner, JobRow>("owner"),
    Text<&JobRecord::owner_group, JobRow>("owner_group"),
};
constexpr const char* kIdKey[] = {"id"};

// --- hosts ---
using records::HostRecord;
// One dimension of a host's capacity: `kDim` in Resources::Of's order (cpu, memory, disk, gpu).
template <int kDim>
constexpr Column<HostRecord> Capacity(const char* name) {
  return {name, Type::kInt64,
          [](const HostRecord& h) -> Value {
            const Resources& r = h.capacity;
            const int64_t v[] = {r.cpu_milli(), r.memory_bytes(), r.disk_bytes(), r.gpu_milli()};
            return v[kDim];
          },
          [](const Cell& c, HostRecord& h) {
            const Resources& r = h.capacity;
            int64_t v[] = {r.cpu_milli(), r.memory_bytes(), r.disk_bytes(), r.gpu_milli()};
            v[kDim] = c.i;
            h.capacity = Resources::Of(v[0], v[1], v[2], v[3]);
            return absl::OkStatus();
          }};
}
constexpr std::array kHostColumns{
    Text<&HostRecord::name>("name"),
    Int<&HostRecord::maintenance>("maintenance", Type::kInt16),
    Capacity<0>("cpu_milli"),
    Capacity<1>("memory_bytes"),
    Capacity<2>("disk_bytes"),
    Capacity<3>("gpu_milli"),
    Column<HostRecord>{"labels", Type::kText,
                       [](const HostRecord& h) -> Value { return EncodeLabels(h.labels); },
                       [](const Cell& c, HostRecord& h) -> absl::Status {
                         ASSIGN_OR_RETURN(h.labels, DecodeLabels(std::string(c.s)));
                         return absl::OkStatus();
                       }},
    Text<&HostRecord::address>("address"),
};
constexpr const char* kNameKey[] = {"name"};

// --- tokens ---
using records::TokenRecord;
constexpr std::array kTokenColumns{
    Text<&TokenRecord::id>("id"),
    Text<&TokenRecord::name>("name"),
    Text<&TokenRecord::user>("user_name"),
    Text<&TokenRecord::group>("group_name"),
    Text<&TokenRecord::role>("role"),
    Text<&TokenRecord::scope>("scope"),
    Text<&TokenRecord::salt>("salt"),
    Text<&TokenRecord::hash>("hash"),
    Text<&TokenRecord::created_by>("created_by"),
    Time<&TokenRecord::created_at>("created_us"),
    NeverTime<&TokenRecord::expires_at>("expires_us"),
    NeverTime<&TokenRecord::revoked_at>("revoked_us"),
};

// --- secrets ---
using records::SecretRecord;
constexpr std::array kSecretColumns{
    Text<&SecretRecord::path>("path"),
    Text<&SecretRecord::key_id>("key_id"),
    Text<&SecretRecord::sealed>("sealed"),
    Text<&SecretRecord::created_by>("created_by"),
    Time<&SecretRecord::created_at>("created_us"),
    Time<&SecretRecord::updated_at>("updated_us"),
};

// --- the audit log ---
using records::AuditRecord;
constexpr std::array kAuditColumns{
    Column<AuditRecord>{"seq", Type::kInt64, nullptr,
                        [](const Cell& c, AuditRecord& a) {
                          a.seq = c.i;
                          return absl::OkStatus();
                        }},
    Time<&AuditRecord::at>("at_us"),
    Text<&AuditRecord::user>("user_name"),
    Text<&AuditRecord::source>("source"),
    Text<&AuditRecord::action>("action"),
    Text<&AuditRecord::pool>("pool"),
    Text<&AuditRecord::target>("target"),
    Text<&AuditRecord::outcome>("outcome"),
    Text<&AuditRecord::message>("message"),
    Text<&AuditRecord::request_id>("request_id"),
};
constexpr const char* kSeqKey[] = {"seq"};

// --- tasks and events ---
using records::TaskEvent;
using records::TaskRecord;
constexpr Column<TaskRecord> kTaskJob{
    "job", Type::kInt64,
    [](const TaskRecord& t) -> Value { return static_cast<int64_t>(t.id.job.value()); },
    [](const Cell& c, TaskRecord& t) {
      t.id.job = JobId(static_cast<uint64_t>(c.i));
      return absl::OkStatus();
    }};
constexpr Column<TaskRecord> kTaskInstance{
    "instance", Type::kInt64,
    [](const TaskRecord& t) -> Value { return static_cast<int64_t>(t.id.instance); },
    [](const Cell& c, TaskRecord& t) {
      t.id.instance = static_cast<uint32_t>(c.i);
      return absl::OkStatus();
    }};
constexpr std::array kTaskColumns{
    kTaskJob,
    kTaskInstance,
    Column<TaskRecord>{"data", Type::kBlob,
                       [](const TaskRecord& t) -> Value { return EncodeTaskRow(t); },
                       [](const Cell& c, TaskRecord& t) { return DecodeTaskRow(t.id, c.s, t); }},
};
constexpr const char* kTaskKey[] = {"job", "instance"};

constexpr std::array kEventBlockColumns{
    Column<EventBlock, EventBlockRow>{"seq", Type::kInt64, nullptr,
                                      [](const Cell&, EventBlockRow&) { return absl::OkStatus(); }},
    Column<EventBlock, EventBlockRow>{"job", Type::kInt64,
                                      [](const EventBlock& b) -> Value { return b.job; },
                                      [](const Cell& c, EventBlockRow& b) {
                                        b.job = c.i;
                                        return absl::OkStatus();
                                      }},
    Column<EventBlock, EventBlockRow>{
        "count", Type::kInt64,
        [](const EventBlock& b) -> Value { return static_cast<int64_t>(b.events->size()); },
        [](const Cell& c, EventBlockRow& b) {
          b.count = c.i;
          return absl::OkStatus();
        }},
    Column<EventBlock, EventBlockRow>{
        "data", Type::kBlob,
        [](const EventBlock& b) -> Value { return EncodeEventBlock(*b.events); },
        [](const Cell& c, EventBlockRow& b) {
          b.data = std::string(c.s);
          return absl::OkStatus();
        }},
};

constexpr std::array kPgTaskColumnsV9{
    kTaskJob,
    kTaskInstance,
    Int<&TaskRecord::run>("run"),
    Column<TaskRecord>{"state", Type::kInt16,
                       [](const TaskRecord& t) -> Value { return static_cast<int64_t>(t.state); },
                       [](const Cell& c, TaskRecord& t) -> absl::Status {
                         ASSIGN_OR_RETURN(t.state, StateOf(c.i));
                         return absl::OkStatus();
                       }},
    Text<&TaskRecord::host>("host"),
    Time<&TaskRecord::started_at>("started_us"),
    Time<&TaskRecord::finished_at>("finished_us"),
    Int<&TaskRecord::exit_code>("exit_code", Type::kInt32),
    Int<&TaskRecord::signal>("signal", Type::kInt32),
    Text<&TaskRecord::reason>("reason"),
    Text<&TaskRecord::message>("message"),
    Int<&TaskRecord::failures>("failures"),
    Time<&TaskRecord::not_before>("not_before_us"),
    Int<&TaskRecord::restart_requested>("restart_requested", Type::kInt16),
    Int<&TaskRecord::spec_version>("spec_version"),
    Int<&TaskRecord::next_spec_version>("next_spec_version"),
    Text<&TaskRecord::volume_host>("volume_host"),
    Int<&TaskRecord::gang_attempt>("gang_attempt"),
    Text<&TaskRecord::health>("health"),
    Text<&TaskRecord::readiness>("readiness"),
    Column<TaskRecord>{"ports", Type::kText,
                       [](const TaskRecord& t) -> Value { return EncodePorts(t.ports); },
                       [](const Cell& c, TaskRecord& t) -> absl::Status {
                         ASSIGN_OR_RETURN(t.ports, DecodePorts(c.s));
                         return absl::OkStatus();
                       }},
};

constexpr std::array kPgEventColumns{
    Column<TaskEvent>{"seq", Type::kInt64, nullptr,
                      [](const Cell&, TaskEvent&) { return absl::OkStatus(); }},
    Column<TaskEvent>{
        "job", Type::kInt64,
        [](const TaskEvent& e) -> Value { return static_cast<int64_t>(e.run.task.job.value()); },
        [](const Cell& c, TaskEvent& e) {
          e.run.task.job = JobId(static_cast<uint64_t>(c.i));
          return absl::OkStatus();
        }},
    Column<TaskEvent>{
        "instance", Type::kInt64,
        [](const TaskEvent& e) -> Value { return static_cast<int64_t>(e.run.task.instance); },
        [](const Cell& c, TaskEvent& e) {
          e.run.task.instance = static_cast<uint32_t>(c.i);
          return absl::OkStatus();
        }},
    Column<TaskEvent>{"run", Type::kInt64,
                      [](const TaskEvent& e) -> Value { return static_cast<int64_t>(e.run.run); },
                      [](const Cell& c, TaskEvent& e) {
                        e.run.run = static_cast<uint32_t>(c.i);
                        return absl::OkStatus();
                      }},
    Time<&TaskEvent::at>("at_us"),
    Column<TaskEvent>{"state", Type::kInt16,
                      [](const TaskEvent& e) -> Value { return static_cast<int64_t>(e.state); },
                      [](const Cell& c, TaskEvent& e) -> absl::Status {
                        ASSIGN_OR_RETURN(e.state, StateOf(c.i));
                        return absl::OkStatus();
                      }},
    Text<&TaskEvent::host>("host"),
    Text<&TaskEvent::reason>("reason"),
    Text<&TaskEvent::message>("message"),
};

}  // namespace

constinit const sql::Table<PoolRecord> kPoolTable{
    .name = "pools",
    .columns = kPoolColumns,
    .key = kPathKey,
    .order_by = "path",
    .key_of = [](const PoolRecord& p) { return p.path; }};
constinit const sql::Table<JobRecord, JobRow> kJobTable{
    .name = "jobs",
    .columns = kJobColumns,
    .key = kIdKey,
    .order_by = "id",
    .key_of = [](const JobRow& j) { return j.id.ToString(); }};
constinit const sql::Table<HostRecord> kHostTable{
    .name = "hosts",
    .columns = kHostColumns,
    .key = kNameKey,
    .order_by = "name",
    .key_of = [](const HostRecord& h) { return h.name; }};
constinit const sql::Table<TokenRecord> kTokenTable{
    .name = "tokens",
    .columns = kTokenColumns,
    .key = kIdKey,
    .order_by = "id",
    .key_of = [](const TokenRecord& t) { return t.id; }};
constinit const sql::Table<SecretRecord> kSecretTable{
    .name = "secrets",
    .columns = kSecretColumns,
    .key = kPathKey,
    .order_by = "path",
    .byte_order = true,
    .key_of = [](const SecretRecord& s) { return s.path; }};
constinit const sql::Table<AuditRecord> kAuditTable{
    .name = "audit",
    .columns = kAuditColumns,
    .key = kSeqKey,
    .order_by = "seq",
    .followed = false,
    .key_of = [](const AuditRecord& a) { return absl::StrCat(a.seq); }};
// Followed on PostgreSQL through task_changes, not a rev column (postgres/schema.h, version 10).
constinit const sql::Table<TaskRecord> kTaskTable{.name = "tasks",
                                                  .columns = kTaskColumns,
                                                  .key = kTaskKey,
                                                  .order_by = "job, instance",
                                                  .followed = false,
                                                  .key_of = &TaskKey<TaskRecord>};
constinit const sql::Table<EventBlock, EventBlockRow> kSqliteEventBlockTable{
    .name = "event_blocks",
    .columns = kEventBlockColumns,
    .key = kSeqKey,
    .order_by = "seq",
    .followed = false,
    .key_of = [](const EventBlockRow& b) { return absl::StrCat(b.job); }};
constinit const sql::Table<EventBlock, EventBlockRow> kPgEventBlockTable{
    .name = "event_blocks",
    .columns = kEventBlockColumns,
    .key = kSeqKey,
    .order_by = "seq",
    .followed = false,
    .key_of = [](const EventBlockRow& b) { return absl::StrCat(b.job); }};
constinit const sql::Table<TaskRecord> kPgTaskTableV9{.name = "tasks_v9",
                                                      .columns = kPgTaskColumnsV9,
                                                      .key = kTaskKey,
                                                      .order_by = "job, instance",
                                                      .key_of = &TaskKey<TaskRecord>};
constinit const sql::Table<TaskEvent> kPgEventTable{
    .name = "events",
    .columns = kPgEventColumns,
    .key = kSeqKey,
    .order_by = "job, instance, seq",
    .followed = false,
    .key_of = [](const TaskEvent& e) { return e.run.task.ToString(); }};

namespace {

std::vector<sql::Shape> SharedTableShapes() {
  return {sql::ShapeOf(kPoolTable),  sql::ShapeOf(kJobTable),    sql::ShapeOf(kHostTable),
          sql::ShapeOf(kTokenTable), sql::ShapeOf(kSecretTable), sql::ShapeOf(kAuditTable)};
}

}  // namespace

std::vector<sql::Shape> SqliteTableShapes() {
  std::vector<sql::Shape> out = SharedTableShapes();
  out.push_back(sql::ShapeOf(kTaskTable));
  out.push_back(sql::ShapeOf(kSqliteEventBlockTable));
  out.push_back(sql::ShapeOf(kUsageTable));
  return out;
}

std::vector<sql::Shape> PgTableShapes() {
  std::vector<sql::Shape> out = SharedTableShapes();
  out.push_back(sql::ShapeOf(kTaskTable));
  out.push_back(sql::ShapeOf(kPgEventTable));
  out.push_back(sql::ShapeOf(kPgEventBlockTable));
  out.push_back(sql::ShapeOf(kUsageTable));
  return out;
}

}  // namespace paceline::store
