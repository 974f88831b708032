// Peloton's ResourcePoolConfig converted into a PoolSpec (peloton.h), and the guess of a
// config's kind.

#include <array>

#include "absl/strings/str_cat.h"
#include "peloton/peloton.h"
#include "peloton/peloton_internal.h"
#include "spec/field_path.h"
#include "spec/spec_validation.h"

namespace paceline::peloton {
namespace {

using yaml_internal::Quote;

constexpr std::array<absl::string_view, 10> kPoolKeys = {
    "changeLog", "name",   "owningTeam", "ldapGroups",      "description",
    "resources", "parent", "policy",     "controllerLimit", "slackLimit"};
constexpr std::array<absl::string_view, 5> kPoolResourceKeys = {"kind", "reservation", "limit",
                                                                "share", "type"};
constexpr std::array<absl::string_view, 1> kLimitKeys = {"maxPercent"};
constexpr std::array<absl::string_view, 2> kPolicies = {"UNKNOWN", "PriorityFIFO"};
constexpr std::array<absl::string_view, 3> kReservationTypes = {"UNKNOWN_TYPE", "ELASTIC",
                                                                "STATIC"};
constexpr std::array<absl::string_view, 4> kResourceKinds = {"cpu", "memory", "disk", "gpu"};
constexpr double kPelotonSlackLimitPercent = 20;

struct KindUnit {
  int64_t scale;
  absl::string_view unit;
};
constexpr std::array<KindUnit, 4> kUnits = {{{kMilliPerUnit, "millicores"},
                                             {kMiB, "bytes"},
                                             {kMiB, "bytes"},
                                             {kMilliPerUnit, "milli-GPUs"}}};

std::optional<double> ReadPercent(const Field& f, Context& ctx) {
  MapReader m = PelotonMap(f, kLimitKeys, "expected a map such as {maxPercent: 10}", ctx);
  std::optional<Field> p = m.Require("maxPercent", "expected a percentage of the reservation");
  if (!p) return std::nullopt;
  ctx.diag.Record(f.path, p->loc);
  return yaml_internal::ReadNumber(*p, ctx.diag);
}

// Reads `resources` into `spec`: amounts, shares, and the pool's type from theirs.
void ReadResources(const Field& f, PoolSpec& spec, Context& ctx) {
  auto items = yaml_internal::ReadSequence(
      f, "expected a list of {kind, reservation, limit, share}", ctx.diag);
  if (!items) return;
  std::array<bool, kNumDims> seen{};
  std::optional<Field> static_field, elastic_field;
  for (const Field& item : *items) {
    MapReader m = PelotonMap(item, kPoolResourceKeys,
                             "expected a map such as {kind: cpu, reservation: 10, limit: 20, "
                             "share: 1}",
                             ctx);
    if (!m.ok()) continue;
    std::optional<Field> kind = m.Require("kind", "expected one of cpu, memory, disk, gpu");
    if (!kind) continue;
    std::optional<size_t> k = yaml_internal::ReadEnum(*kind, kResourceKinds, ctx.diag);
    if (!k) continue;
    if (seen[*k]) {
      ctx.diag.Error(kind->loc, kind->path,
                     absl::StrCat(Quote(kResourceKinds[*k]), " is listed twice; each kind once"));
      continue;
    }
    seen[*k] = true;
    const std::string dim_path = absl::StrCat("resources.", kResourceKinds[*k]);
    ctx.diag.Record(dim_path, item.loc);
    DimSpec& d = spec.dim(static_cast<Dim>(*k));
    auto amount = [&](absl::string_view key) -> std::optional<int64_t> {
      std::optional<Field> v = Present(m, key);
      if (!v) return std::nullopt;
      ctx.diag.Record(ChildPath(dim_path, key), v->loc);
      std::optional<double> n = yaml_internal::ReadNumber(*v, ctx.diag);
      if (!n) return std::nullopt;
      return ScaleExactly(*v, *n, kUnits[*k].scale, kUnits[*k].unit, ctx);
    };
    d.reservation = amount("reservation").value_or(0);
    d.limit = amount("limit").value_or(0);
    if (!Present(m, "limit")) {
      ctx.Warn(item,
               "has no limit, which Peloton took as 0: the pool may use none of it beyond "
               "its reservation");
    }
    d.share = 1;
    if (std::optional<Field> s = Present(m, "share")) {
      if (auto n = yaml_internal::ReadNumber(*s, ctx.diag)) d.share = *n;
    }
    if (std::optional<Field> t = Present(m, "type")) {
      if (auto v = ReadPelotonEnum(*t, kReservationTypes, ctx)) {
        if (*v == 2) static_field = t;
        if (*v == 1) elastic_field = t;
      }
    }
  }
  for (size_t k = 0; k < kResourceKinds.size(); ++k) {
    if (seen[k]) continue;
    DimSpec& d = spec.dim(static_cast<Dim>(k));
    d.reservation = 0;
    d.limit = 0;
    ctx.Warn(f, absl::StrCat("have no ", kResourceKinds[k],
                             " entry, which Peloton took as reservation "
                             "0 and limit 0: the pool's jobs may use no ",
                             kResourceKinds[k]));
  }
  if (static_field && elastic_field) {
    ctx.diag.Error(static_field->loc, static_field->path,
                   "is STATIC while another resource is ELASTIC; a Paceline pool is static or "
                   "elastic as a whole: expected one type for every resource");
  } else if (static_field) {
    spec.type = PoolType::kStatic;
  }
}

PoolSpec ReadPool(const Field& root, Context& ctx) {
  PoolSpec spec;
  MapReader m = PelotonMap(root, kPoolKeys, "expected a Peloton ResourcePoolConfig map", ctx);
  if (!m.ok()) return spec;
  ctx.diag.Record("", root.loc);
  if (std::optional<Field> f = Present(m, "changeLog")) {
    ctx.Warn(*f, "is not kept: Peloton's server sets it");
  }
  if (std::optional<Field> f = Present(m, "name")) {
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) {
      ctx.Warn(*f, absl::StrCat(Quote(*s),
                                " is not kept: a Paceline pool is named by its path "
                                "(`paceline pool create /PATH`)"));
    }
  }
  for (absl::string_view key : {"owningTeam", "ldapGroups"}) {
    if (std::optional<Field> f = Present(m, key)) {
      ctx.Warn(*f,
               "is not kept: in Paceline, who may manage a pool and run jobs in it is given "
               "by roles on it (`paceline token create --role pool-admin --pool /PATH`)");
    }
  }
  if (std::optional<Field> f = Present(m, "description")) {
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) spec.description = *s;
  }
  if (std::optional<Field> f = Present(m, "parent")) {
    ctx.diag.Error(f->loc, f->path,
                   "is given by the pool's path (`paceline pool create /PARENT/NAME`), as "
                   "Peloton's CLI required; remove it");
  }
  if (std::optional<Field> f = Present(m, "policy")) {
    ReadPelotonEnum(*f, kPolicies, ctx);  // PriorityFIFO (or 0, which Peloton made so) is ours
  }
  if (std::optional<Field> f =
          m.Require("resources", "expected a list of {kind, reservation, limit, share}")) {
    ReadResources(*f, spec, ctx);
  }
  if (std::optional<Field> f = Present(m, "controllerLimit")) {
    ctx.diag.Record("controller_limit", f->loc);
    spec.controller_limit_percent = ReadPercent(*f, ctx);
  }
  spec.slack_limit_percent = kPelotonSlackLimitPercent;
  if (std::optional<Field> f = Present(m, "slackLimit")) {
    ctx.diag.Record("slack_limit", f->loc);
    spec.slack_limit_percent = ReadPercent(*f, ctx);
  }
  return spec;
}

}  // namespace

absl::StatusOr<Converted<PoolSpec>> ConvertPool(absl::string_view yaml_text,
                                                absl::string_view file_name) {
  return ConvertDocument<PoolSpec>(yaml_text, file_name, "Peloton resource pool config", ReadPool,
                                   [](const PoolSpec& s) { return ValidatePoolSpec(s); });
}

ConfigKind GuessKind(absl::string_view yaml_text) {
  // A text that does not read is a job: the job parser reports the error with its position.
  const yaml_internal::Node root = yaml_internal::ReadYaml(yaml_text).root;
  if (!root.IsMap()) return ConfigKind::kJob;
  bool resources = false;
  for (size_t i = 0; i < root.size(); ++i) {
    if (!root.key(i).IsScalar()) continue;
    const std::string key = yaml_internal::FoldKey(root.key(i).Scalar());
    if (key == "instancecount" || key == "defaultconfig" || key == "sla") return ConfigKind::kJob;
    if (key == "resources" && root.value(i).IsSequence()) resources = true;
  }
  return resources ? ConfigKind::kPool : ConfigKind::kJob;
}

}  // namespace paceline::peloton
