// ParsePoolSpec: the YAML form of a pool spec (see yaml_spec.h, docs/specs.md).

#include <array>
#include <exception>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "spec/embedded_spec.h"
#include "spec/field_path.h"
#include "spec/spec_validation.h"
#include "spec/yaml_reader.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using yaml_internal::Diagnostics;
using yaml_internal::Field;
using yaml_internal::MapReader;

constexpr std::array<absl::string_view, 7> kPoolKeys = {
    "description",     "type",      "resources", "controller_limit", "slack_limit",
    "retain_terminal", "fair_share"};
constexpr std::array<absl::string_view, 1> kFairShareKeys = {"half_life"};
constexpr std::array<absl::string_view, 4> kDimKeys = {"cpu", "memory", "disk", "gpu"};
constexpr std::array<absl::string_view, 3> kDimSpecKeys = {"reservation", "limit", "share"};
constexpr std::array<absl::string_view, 2> kPoolTypes = {"elastic", "static"};

// "10%", "12.5%" or a plain number 10; the range is checked by ValidatePoolSpec.
std::optional<double> ReadPercent(const Field& f, Diagnostics& diag) {
  constexpr absl::string_view kExpected = "expected a percent of the reservation such as 10%";
  std::optional<std::string> text = yaml_internal::ScalarText(f, kExpected, diag);
  if (!text) return std::nullopt;
  absl::string_view number = *text;
  absl::ConsumeSuffix(&number, "%");
  std::optional<double> v = yaml_internal::ParseNumberText(number);
  if (!v) {
    diag.Error(f.loc, f.path,
               absl::StrCat(yaml_internal::Quote(*text), " is not a percent; ", kExpected));
  }
  return v;
}

void ReadDim(const Field& f, Dim dim, PoolSpec& spec, Diagnostics& diag) {
  MapReader map(f, kDimSpecKeys, "expected a map such as {reservation: 10, limit: 20, share: 1}",
                diag);
  DimSpec& ds = spec.dim(dim);
  if (auto r = map.Get("reservation")) {
    if (auto v = yaml_internal::ReadQuantity(*r, dim, diag)) ds.reservation = *v;
  }
  if (auto l = map.Get("limit")) {
    if (l->node.IsScalar() && l->node.Scalar() == "unlimited") {
      ds.limit = kUnlimited;
    } else if (auto v = yaml_internal::ReadQuantity(*l, dim, diag)) {
      ds.limit = *v;
    }
  }
  if (auto s = map.Get("share")) {
    if (auto v = yaml_internal::ReadNumber(*s, diag)) ds.share = *v;
  }
}

PoolSpec ReadPool(const Field& root, Diagnostics& diag) {
  PoolSpec spec;
  MapReader top(root, kPoolKeys, "expected a pool spec map", diag);
  if (auto f = top.Get("description")) {
    if (auto v = yaml_internal::ReadString(*f, diag)) spec.description = *v;
  }
  if (auto f = top.Get("type")) {
    if (auto v = yaml_internal::ReadEnum(*f, kPoolTypes, diag)) {
      spec.type = static_cast<PoolType>(*v);
    }
  }
  if (auto f = top.Get("resources")) {
    MapReader dims(*f, kDimKeys, "expected a map from cpu, memory, disk, gpu to their settings",
                   diag);
    for (const auto& [name, field] : dims.entries()) {
      ReadDim(field, *DimFromName(name), spec, diag);
    }
  }
  if (auto f = top.Get("controller_limit")) spec.controller_limit_percent = ReadPercent(*f, diag);
  if (auto f = top.Get("slack_limit")) spec.slack_limit_percent = ReadPercent(*f, diag);
  if (auto f = top.Get("retain_terminal")) {
    if (f->node.IsScalar() && f->node.Scalar() == "forever") {
      spec.retain_terminal = absl::InfiniteDuration();
    } else {
      spec.retain_terminal = yaml_internal::ReadDuration(*f, diag);
    }
  }
  if (auto f = top.Get("fair_share")) {
    MapReader map(*f, kFairShareKeys, "expected a map such as {half_life: 1d}", diag);
    FairShareSpec fs;
    if (auto h = map.Get("half_life")) {
      if (auto v = yaml_internal::ReadDuration(*h, diag)) fs.half_life = *v;
    }
    if (map.ok()) spec.fair_share = fs;
  }
  return spec;
}

}  // namespace

absl::StatusOr<PoolSpec> ParsePoolSpec(absl::string_view yaml_text, absl::string_view file_name) {
  return yaml_internal::ParseSpecDocument<PoolSpec>(yaml_text, file_name, "pool spec", ReadPool,
                                                    ValidatePoolSpec);
}

namespace yaml_internal {

PoolSpec ReadEmbeddedPoolSpec(const Field& f, Diagnostics& diag) {
  PoolSpec spec = ReadPool(f, diag);
  diag.AddValidationErrors(ValidatePoolSpec(spec), f.path);
  return spec;
}

}  // namespace yaml_internal
}  // namespace paceline
