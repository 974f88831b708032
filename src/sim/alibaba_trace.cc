#include "sim/alibaba_trace.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paceline::sim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A CSV table: the header's column positions and the data rows, with 1-based line numbers.
class Table {
 public:
  static absl::StatusOr<Table> Parse(absl::string_view csv) {
    Table t;
    int line_no = 0;
    bool header = true;
    for (absl::string_view line : absl::StrSplit(csv, '\n')) {
      ++line_no;
      line = absl::StripSuffix(line, "\r");
      if (line.empty()) continue;
      std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
      if (header) {
        for (size_t i = 0; i < fields.size(); ++i) {
          t.columns_[absl::StripAsciiWhitespace(fields[i])] = i;
        }
        t.width_ = fields.size();
        header = false;
        continue;
      }
      if (fields.size() != t.width_) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": ", fields.size(),
                                                       " fields, the header has ", t.width_));
      }
      t.rows_.push_back(Row{line_no, std::move(fields)});
    }
    if (header) return absl::InvalidArgumentError("empty file: no header line");
    return t;
  }

  // Position of a column; NotFound-like error when required and absent.
  absl::StatusOr<size_t> Column(absl::string_view name) const {
    auto it = columns_.find(name);
    if (it == columns_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("missing column '", name, "'"));
    }
    return it->second;
  }
  bool Has(absl::string_view name) const { return columns_.contains(name); }

  struct Row {
    int line;
    std::vector<absl::string_view> fields;
  };
  const std::vector<Row>& rows() const { return rows_; }

 private:
  absl::flat_hash_map<std::string, size_t> columns_;
  size_t width_ = 0;
  std::vector<Row> rows_;
};

absl::StatusOr<int64_t> Number(const Table::Row& row, size_t col, absl::string_view name) {
  absl::string_view text = absl::StripAsciiWhitespace(row.fields[col]);
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    // Some files carry integral values printed as decimals ("12537496.0").
    double d = 0;
    if (!absl::SimpleAtod(text, &d) || d != static_cast<double>(static_cast<int64_t>(d))) {
      return absl::InvalidArgumentError(absl::StrCat("line ", row.line, ": column ", name, ": '",
                                                     text, "' is not a whole number"));
    }
    v = static_cast<int64_t>(d);
  }
  if (v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", row.line, ": column ", name, ": ", v, " is negative"));
  }
  return v;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status Prefixed(const absl::Status& s, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

}  // namespace

Resources AlibabaNode::capacity() const {
  return Resources::Of(cpu_milli, memory_mib * kMiB, 0, int64_t{gpus} * 1000);
}

int64_t AlibabaTask::gpu_ask_milli() const {
  if (num_gpu == 0) return 0;
  if (num_gpu == 1 && gpu_milli > 0 && gpu_milli < 1000) return gpu_milli;
  return int64_t{num_gpu} * 1000;
}

Resources AlibabaTask::resources() const {
  return Resources::Of(cpu_milli, memory_mib * kMiB, 0, gpu_ask_milli());
}

absl::StatusOr<std::vector<AlibabaNode>> ParseAlibabaNodes(absl::string_view csv) {
  absl::StatusOr<Table> t = Table::Parse(csv);
  if (!t.ok()) return t.status();
  size_t c[5];
  const char* names[5] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<size_t> col = t->Column(names[i]);
    if (!col.ok()) return col.status();
    c[i] = *col;
  }
  std::vector<AlibabaNode> out;
  out.reserve(t->rows().size());
  for (const Table::Row& row : t->rows()) {
    AlibabaNode n;
    n.name = std::string(absl::StripAsciiWhitespace(row.fields[c[0]]));
    absl::StatusOr<int64_t> cpu = Number(row, c[1], names[1]);
    absl::StatusOr<int64_t> mem = Number(row, c[2], names[2]);
    absl::StatusOr<int64_t> gpu = Number(row, c[3], names[3]);
    for (const auto* s : {&cpu, &mem, &gpu}) {
      if (!s->ok()) return s->status();
    }
    if (*gpu > 1024) {
      return absl::InvalidArgumentError(absl::StrCat("line ", row.line, ": ", *gpu, " GPUs"));
    }
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.gpus = static_cast<int>(*gpu);
    n.model = std::string(absl::StripAsciiWhitespace(row.fields[c[4]]));
    if (n.gpus > 0 && n.model.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", row.line, ": a node with GPUs needs a model"));
    }
    out.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<std::vector<AlibabaTask>> ParseAlibabaTasks(absl::string_view csv) {
  absl::StatusOr<Table> t = Table::Parse(csv);
  if (!t.ok()) return t.status();
  size_t c[5];
  const char* names[5] = {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"};
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<size_t> col = t->Column(names[i]);
    if (!col.ok()) return col.status();
    c[i] = *col;
  }
  auto optional = [&](absl::string_view name) -> std::optional<size_t> {
    if (!t->Has(name)) return std::nullopt;
    return *t->Column(name);
  };
  std::optional<size_t> spec = optional("gpu_spec"), qos = optional("qos"),
                        phase = optional("pod_phase"), created = optional("creation_time"),
                        deleted = optional("deletion_time"), scheduled = optional("scheduled_time");
  std::vector<AlibabaTask> out;
  out.reserve(t->rows().size());
  for (const Table::Row& row : t->rows()) {
    AlibabaTask k;
    k.name = std::string(absl::StripAsciiWhitespace(row.fields[c[0]]));
    absl::StatusOr<int64_t> cpu = Number(row, c[1], names[1]);
    absl::StatusOr<int64_t> mem = Number(row, c[2], names[2]);
    absl::StatusOr<int64_t> ngpu = Number(row, c[3], names[3]);
    absl::StatusOr<int64_t> mgpu = Number(row, c[4], names[4]);
    for (const auto* s : {&cpu, &mem, &ngpu, &mgpu}) {
      if (!s->ok()) return s->status();
    }
    if (*ngpu > 1024 || *mgpu > 1000) {
      return absl::InvalidArgumentError(absl::StrCat("line ", row.line, ": num_gpu ", *ngpu,
                                                     ", gpu_milli ", *mgpu, " out of range"));
    }
    k.cpu_milli = *cpu;
    k.memory_mib = *mem;
    k.num_gpu = static_cast<int>(*ngpu);
    k.gpu_milli = *mgpu;
    if (spec) {
      for (absl::string_view m : absl::StrSplit(row.fields[*spec], '|', absl::SkipWhitespace())) {
        k.gpu_models.emplace_back(absl::StripAsciiWhitespace(m));
      }
    }
    if (qos) k.qos = std::string(absl::StripAsciiWhitespace(row.fields[*qos]));
    if (phase) k.phase = std::string(absl::StripAsciiWhitespace(row.fields[*phase]));
    for (auto [col, field, name] :
         {std::make_tuple(created, &k.creation_time, "creation_time"),
          std::make_tuple(deleted, &k.deletion_time, "deletion_time"),
          std::make_tuple(scheduled, &k.scheduled_time, "scheduled_time")}) {
      if (!col || absl::StripAsciiWhitespace(row.fields[*col]).empty()) continue;
      absl::StatusOr<int64_t> v = Number(row, *col, name);
      if (!v.ok()) return v.status();
      *field = *v;
    }
    out.push_back(std::move(k));
  }
  return out;
}

absl::StatusOr<std::vector<AlibabaNode>> ReadAlibabaNodes(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<AlibabaNode>> nodes = ParseAlibabaNodes(*text);
  if (!nodes.ok()) return Prefixed(nodes.status(), path);
  return nodes;
}

absl::StatusOr<std::vector<AlibabaTask>> ReadAlibabaTasks(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<AlibabaTask>> tasks = ParseAlibabaTasks(*text);
  if (!tasks.ok()) return Prefixed(tasks.status(), path);
  return tasks;
}

}  // namespace paceline::sim
