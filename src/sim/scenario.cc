// ParseScenario: the YAML form of a simulation scenario (see scenario.h, docs/sim.md).

#include "sim/scenario.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/units.h"
#include "spec/embedded_spec.h"
#include "spec/field_path.h"
#include "spec/yaml_reader.h"

namespace paceline::sim {
namespace {

using yaml_internal::Diagnostics;
using yaml_internal::Field;
using yaml_internal::MapReader;

constexpr std::array<absl::string_view, 12> kTopKeys = {
    "seed",      "run_for", "report_every", "cycle_every", "heartbeat_every", "start_delay",
    "placement", "hosts",   "pools",        "jobs",        "description",     "backfill"};
constexpr std::array<absl::string_view, 5> kHostKeys = {"count", "name", "resources", "gpu_model",
                                                        "labels"};
constexpr std::array<absl::string_view, 4> kHostResourceKeys = {"cpu", "memory", "disk", "gpu"};
constexpr std::array<absl::string_view, 3> kJobKeys = {"at", "pool", "spec"};

// Reads a value into `out` with `read` when the field is present and valid.
template <typename T, typename Reader>
void ReadInto(const std::optional<Field>& f, T& out, Reader read, Diagnostics& diag) {
  if (!f) return;
  if (auto v = read(*f, diag)) out = std::move(*v);
}

// A positive duration (cadences must move the clock).
std::optional<absl::Duration> ReadPositiveDuration(const Field& f, Diagnostics& diag) {
  std::optional<absl::Duration> d = yaml_internal::ReadDuration(f, diag);
  if (d && *d <= absl::ZeroDuration()) {
    diag.Error(f.loc, f.path, "is 0; expected a positive duration such as 1s");
    return std::nullopt;
  }
  return d;
}

// "/", "/a", "/a/b-1": names of letters, digits, '.', '_', '-'.
bool ValidPoolPath(absl::string_view path) {
  if (path == "/") return true;
  if (!absl::StartsWith(path, "/") || absl::EndsWith(path, "/")) return false;
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty()) return false;
    for (char c : part) {
      if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
  }
  return true;
}

std::string ParentOf(absl::string_view path) {
  size_t cut = path.find_last_of('/');
  return cut == 0 ? "/" : std::string(path.substr(0, cut));
}

// Host names must be usable as agent names: letters, digits, '.', '_', '-'.
bool ValidHostName(absl::string_view name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

HostGroup ReadHostGroup(const Field& f, size_t index, Diagnostics& diag) {
  HostGroup g;
  g.name = absl::StrCat("host", index);
  MapReader m(f, kHostKeys,
              "expected a map such as {count: 10, resources: {cpu: 16, memory: 64Gi}}", diag);
  if (!m.ok()) return g;
  if (auto c = m.Get("count")) {
    if (auto v = yaml_internal::ReadInt(*c, 1, kMaxHostsPerGroup, diag)) {
      g.count = static_cast<uint32_t>(*v);
    }
  }
  if (auto n = m.Get("name")) {
    if (auto v = yaml_internal::ReadString(*n, diag)) {
      if (ValidHostName(*v)) {
        g.name = *v;
      } else {
        diag.Error(n->loc, n->path,
                   absl::StrCat(yaml_internal::Quote(*v),
                                " is not a host name prefix; expected letters, digits, '.', '_' "
                                "or '-', such as rack-a"));
      }
    }
  }
  if (auto r = m.Require("resources", "expected a map such as {cpu: 16, memory: 64Gi}")) {
    MapReader rm(*r, kHostResourceKeys, "expected a map such as {cpu: 16, memory: 64Gi, gpu: 8}",
                 diag);
    for (Dim d : kAllDims) {
      std::optional<Field> v = d == Dim::kCpu ? rm.Require("cpu", "expected cores such as 16")
                               : d == Dim::kMemory
                                   ? rm.Require("memory", "expected a size such as 64Gi")
                                   : rm.Get(DimName(d));
      if (!v) continue;
      if (d == Dim::kGpu) {
        // Whole devices: the host tracks each one.
        if (auto n = yaml_internal::ReadInt(*v, 0, 1024, diag)) g.resources[d] = *n * 1000;
      } else if (auto q = yaml_internal::ReadQuantity(*v, d, diag)) {
        g.resources[d] = *q;
        if (*q == 0 && d != Dim::kDisk) {
          diag.Error(v->loc, v->path, "is 0; a host needs some cpu and memory");
        }
      }
    }
  }
  if (auto gm = m.Get("gpu_model")) {
    if (auto v = yaml_internal::ReadString(*gm, diag)) g.gpu_model = *v;
  } else if (g.resources[Dim::kGpu] > 0) {
    g.gpu_model = "gpu";
  }
  if (auto l = m.Get("labels")) {
    auto labels =
        yaml_internal::ReadStringMap(*l, "expected a map of strings such as {zone: a}", diag);
    if (labels) g.labels.assign(labels->begin(), labels->end());
  }
  return g;
}

ScenarioJob ReadJob(const Field& f, Diagnostics& diag) {
  ScenarioJob j;
  MapReader m(f, kJobKeys, "expected a map such as {at: 30s, pool: /a, spec: {...}}", diag);
  if (!m.ok()) return j;
  if (auto a = m.Get("at")) {
    if (auto v = yaml_internal::ReadDuration(*a, diag)) j.at = *v;
  }
  if (auto p = m.Require("pool", "expected a leaf pool path such as /a")) {
    if (auto v = yaml_internal::ReadString(*p, diag)) j.pool = *v;
  }
  if (auto s = m.Require("spec", "expected a job spec map")) {
    // Simulated tasks run no command: the scenario may leave it out.
    j.spec = yaml_internal::ReadEmbeddedJobSpec(*s, diag, "simulated");
  }
  return j;
}

void ReadPools(const Field& f, Scenario& sc, Diagnostics& diag) {
  MapReader m(f, "expected a map from pool path to pool spec, such as {/a: {resources: ...}}",
              diag);
  for (const auto& [path, field] : m.entries()) {
    if (!ValidPoolPath(path)) {
      diag.Error(field.loc, field.path,
                 absl::StrCat(yaml_internal::Quote(path),
                              " is not a pool path; expected / then names of letters, digits, "
                              "'.', '_', '-', such as /ads/training"));
      continue;
    }
    sc.pools[path] = yaml_internal::ReadEmbeddedPoolSpec(field, diag);
  }
  for (const auto& [path, field] : m.entries()) {
    if (!ValidPoolPath(path) || path == "/") continue;
    std::string parent = ParentOf(path);
    if (parent != "/" && !sc.pools.contains(parent)) {
      diag.Error(field.loc, field.path,
                 absl::StrCat("its parent pool ", parent, " is not declared; add it to pools"));
    }
  }
}

bool IsLeaf(const Scenario& sc, const std::string& path) {
  auto it = sc.pools.upper_bound(path);
  std::string prefix = path == "/" ? "/" : path + "/";
  return it == sc.pools.end() || !absl::StartsWith(it->first, prefix);
}

void CrossCheck(const Scenario& sc, const Field& root, const std::vector<Field>& host_fields,
                const std::vector<Field>& job_fields, const std::optional<Field>& run_for,
                Diagnostics& diag) {
  absl::flat_hash_map<std::string, size_t> names;
  for (size_t i = 0; i < sc.hosts.size() && i < host_fields.size(); ++i) {
    auto [it, inserted] = names.emplace(sc.hosts[i].name, i);
    if (!inserted) {
      diag.Error(host_fields[i].loc, ChildPath(host_fields[i].path, "name"),
                 absl::StrCat("host name prefix ", yaml_internal::Quote(sc.hosts[i].name),
                              " is also used by hosts[", it->second,
                              "]; expected a unique name per host group"));
    }
  }
  bool runs_until_killed = false;
  for (size_t i = 0; i < sc.jobs.size() && i < job_fields.size(); ++i) {
    const ScenarioJob& j = sc.jobs[i];
    const Field& f = job_fields[i];
    if (!j.pool.empty()) {
      if (!sc.pools.contains(j.pool)) {
        diag.Error(f.loc, ChildPath(f.path, "pool"),
                   absl::StrCat("pool ", yaml_internal::Quote(j.pool),
                                " is not declared; expected one of the pools of the scenario"));
      } else if (!IsLeaf(sc, j.pool)) {
        diag.Error(f.loc, ChildPath(f.path, "pool"),
                   absl::StrCat("pool ", j.pool, " has child pools; jobs run only in leaf pools"));
      }
    }
    if (j.at > sc.run_for) {
      diag.Error(f.loc, ChildPath(f.path, "at"),
                 absl::StrCat("is ", FormatDurationShort(j.at), ", after run_for (",
                              FormatDurationShort(sc.run_for), "); the job would never arrive"));
    }
    runs_until_killed |=
        j.spec.task.duration == absl::ZeroDuration() || j.spec.type != JobType::kBatch;
  }
  if (runs_until_killed && sc.run_for == absl::InfiniteDuration() && !run_for) {
    diag.Error(root.loc, "run_for",
               "is required: some tasks run until killed (a non-batch job, or task.duration "
               "0); expected a duration such as 1h");
  }
}

Scenario ReadScenario(const Field& root, Diagnostics& diag) {
  Scenario sc;
  MapReader top(root, kTopKeys, "expected a scenario map with hosts, pools and jobs", diag);
  if (auto f = top.Get("seed")) {
    if (auto v = yaml_internal::ReadInt(*f, 0, INT64_MAX, diag))
      sc.seed = static_cast<uint64_t>(*v);
  }
  std::optional<Field> run_for = top.Get("run_for");
  if (run_for) {
    if (auto v = ReadPositiveDuration(*run_for, diag)) sc.run_for = *v;
  }
  ReadInto(top.Get("report_every"), sc.report_every, ReadPositiveDuration, diag);
  ReadInto(top.Get("cycle_every"), sc.cycle_every, ReadPositiveDuration, diag);
  ReadInto(top.Get("heartbeat_every"), sc.heartbeat_every, ReadPositiveDuration, diag);
  ReadInto(top.Get("start_delay"), sc.start_delay, yaml_internal::ReadDuration, diag);
  ReadInto(top.Get("placement"), sc.placement, yaml_internal::ReadString, diag);
  ReadInto(top.Get("backfill"), sc.backfill, yaml_internal::ReadBool, diag);
  (void)top.Get("description");  // free text, for the reader of the file

  std::vector<Field> host_fields;
  if (auto f = top.Require("hosts",
                           "expected a list of host groups such as "
                           "[{count: 10, resources: {cpu: 16, memory: 64Gi}}]")) {
    host_fields = yaml_internal::ReadSequence(*f, "expected a list of host groups", diag)
                      .value_or(std::vector<Field>{});
    if (host_fields.empty() && f->node.IsSequence()) {
      diag.Error(f->loc, f->path, "is empty; expected at least one host group");
    }
    for (size_t i = 0; i < host_fields.size(); ++i) {
      sc.hosts.push_back(ReadHostGroup(host_fields[i], i, diag));
    }
  }
  if (auto f = top.Require("pools", "expected a map from pool path to pool spec")) {
    ReadPools(*f, sc, diag);
  }
  std::vector<Field> job_fields;
  if (auto f = top.Get("jobs")) {
    job_fields = yaml_internal::ReadSequence(*f, "expected a list of jobs", diag)
                     .value_or(std::vector<Field>{});
    for (const Field& jf : job_fields) sc.jobs.push_back(ReadJob(jf, diag));
  }
  CrossCheck(sc, root, host_fields, job_fields, run_for, diag);
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(),
                   [](const ScenarioJob& a, const ScenarioJob& b) { return a.at < b.at; });
  return sc;
}

}  // namespace

absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml_text, absl::string_view file_name) {
  return yaml_internal::ParseSpecDocument<Scenario>(
      yaml_text, file_name, "scenario", ReadScenario,
      [](const Scenario&) { return std::vector<FieldError>{}; });
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat("cannot read scenario '", path, "': no such file"));
  }
  if (ec || std::filesystem::is_directory(st)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read scenario '", path, "': ", ec ? ec.message() : "it is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read scenario '", path, "': ", std::strerror(errno)));
  }
  std::string text;
  char buf[64 * 1024];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxScenarioBytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot read scenario '", path, "': larger than ", kMaxScenarioBytes >> 20, " MiB"));
    }
  }
  return ParseScenario(text, path);
}

}  // namespace paceline::sim
