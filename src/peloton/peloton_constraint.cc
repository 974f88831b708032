// Peloton's constraints converted (peloton_constraint_internal.h).

#include <array>

#include "absl/strings/str_cat.h"
#include "peloton/peloton_constraint_internal.h"

namespace paceline::peloton {
namespace {

using yaml_internal::Quote;

constexpr std::array<absl::string_view, 4> kConstraintKeys = {"type", "labelConstraint",
                                                              "andConstraint", "orConstraint"};
constexpr std::array<absl::string_view, 4> kConstraintTypes = {
    "UNKNOWN_CONSTRAINT", "LABEL_CONSTRAINT", "AND_CONSTRAINT", "OR_CONSTRAINT"};
constexpr std::array<absl::string_view, 4> kLabelConstraintKeys = {"kind", "condition", "label",
                                                                   "requirement"};
constexpr std::array<absl::string_view, 3> kConstraintKinds = {"UNKNOWN", "TASK", "HOST"};
constexpr std::array<absl::string_view, 4> kConditions = {
    "CONDITION_UNKNOWN", "CONDITION_LESS_THAN", "CONDITION_EQUAL", "CONDITION_GREATER_THAN"};
constexpr std::array<absl::string_view, 1> kListKeys = {"constraints"};

enum Kind { kTask = 1, kHost = 2 };
enum Condition { kLess = 1, kEqual = 2, kGreater = 3 };

struct LabelRule {
  Kind kind;
  Condition condition;
  std::string key;
  std::string value;
  int64_t requirement = 0;
};

bool Holds(Condition c, int64_t count, int64_t requirement) {
  switch (c) {
    case kLess:
      return count < requirement;
    case kEqual:
      return count == requirement;
    case kGreater:
      return count > requirement;
  }
  return false;
}

std::optional<LabelRule> ReadLabelRule(const Field& f, Context& ctx) {
  MapReader m = PelotonMap(f, kLabelConstraintKeys,
                           "expected a map such as {kind: HOST, condition: CONDITION_EQUAL, "
                           "label: {key: zone, value: a}, requirement: 1}",
                           ctx);
  if (!m.ok()) return std::nullopt;
  LabelRule r{};
  std::optional<Field> kind = m.Require("kind", "expected 1 (TASK) or 2 (HOST)");
  std::optional<Field> cond =
      m.Require("condition", "expected 1 (LESS_THAN), 2 (EQUAL) or 3 (GREATER_THAN)");
  std::optional<Field> label = m.Require("label", "expected {key: ..., value: ...}");
  std::optional<size_t> k = kind ? ReadPelotonEnum(*kind, kConstraintKinds, ctx) : std::nullopt;
  std::optional<size_t> c = cond ? ReadPelotonEnum(*cond, kConditions, ctx) : std::nullopt;
  if (k && *k == 0) {
    ctx.diag.Error(kind->loc, kind->path, "is UNKNOWN; expected 1 (TASK) or 2 (HOST)");
    k.reset();
  }
  if (c && *c == 0) {
    ctx.diag.Error(cond->loc, cond->path,
                   "is CONDITION_UNKNOWN; expected 1 (LESS_THAN), 2 (EQUAL) or 3 (GREATER_THAN)");
    c.reset();
  }
  if (std::optional<Field> req = Present(m, "requirement")) {
    if (auto n = yaml_internal::ReadInt(*req, 0, 0xffffffffLL, ctx.diag)) r.requirement = *n;
  }
  bool label_ok = false;
  if (label) {
    MapReader l = PelotonMap(*label, kLabelKeys, "expected {key: ..., value: ...}", ctx);
    if (std::optional<Field> key = l.Require("key", "expected the label's key")) {
      if (auto s = yaml_internal::ReadString(*key, ctx.diag)) {
        r.key = *s;
        label_ok = true;
      }
    }
    if (std::optional<Field> value = Present(l, "value")) {
      if (auto s = yaml_internal::ReadString(*value, ctx.diag)) r.value = *s;
    }
  }
  if (!k || !c || !label_ok) return std::nullopt;
  r.kind = static_cast<Kind>(*k);
  r.condition = static_cast<Condition>(*c);
  return r;
}

// A HOST rule as "has the label" (true), "lacks it" (false), or nullopt after an error.
std::optional<bool> HostRuleMeaning(const Field& f, const LabelRule& r, Context& ctx) {
  const bool at0 = Holds(r.condition, 0, r.requirement);
  const bool at1 = Holds(r.condition, 1, r.requirement);
  if (at0 == at1) {
    ctx.diag.Error(f.loc, f.path,
                   absl::StrCat("holds on ", at0 ? "every" : "no", " host (a host has the label ",
                                Quote(r.key + "=" + r.value),
                                " 0 or 1 times); expected CONDITION_EQUAL with requirement 1 (has "
                                "it) or 0 (lacks it)"));
    return std::nullopt;
  }
  return at1;
}

void ConvertLabelRule(const Field& f, const LabelRule& r,
                      const std::map<std::string, std::string>& labels,
                      std::vector<Constraint>& out, Context& ctx) {
  if (r.kind == kHost) {
    std::optional<bool> has = HostRuleMeaning(f, r, ctx);
    if (!has) return;
    out.push_back(
        LabelConstraint{r.key, *has ? ConstraintOp::kIn : ConstraintOp::kNotIn, {r.value}, 0});
    return;
  }
  int64_t at_most = 0;
  if (r.condition == kLess && r.requirement >= 1) at_most = r.requirement;
  if (r.condition == kEqual && r.requirement == 0) at_most = 1;
  if (at_most == 0) {
    ctx.diag.Error(f.loc, f.path,
                   "asks for tasks to be placed next to other tasks, which Paceline does not "
                   "do; it limits tasks per host: expected kind TASK with CONDITION_LESS_THAN N "
                   "(at most N per host) or CONDITION_EQUAL 0 (one per host)");
    return;
  }
  auto it = labels.find(r.key);
  if (it == labels.end() || it->second != r.value) {
    ctx.diag.Error(f.loc, f.path,
                   absl::StrCat("counts the tasks labelled ", Quote(r.key + "=" + r.value),
                                ", and Paceline counts the tasks that carry the job's own value "
                                "of a label; expected the job (or its defaultConfig) to have "
                                "the label ",
                                Quote(r.key + "=" + r.value)));
    return;
  }
  out.push_back(MaxPerHostConstraint{static_cast<uint32_t>(at_most), r.key});
}

std::optional<std::vector<Field>> ReadList(const Field& f, Context& ctx) {
  MapReader m = PelotonMap(f, kListKeys, "expected a map such as {constraints: [...]}", ctx);
  std::optional<Field> list = m.Require("constraints", "expected a list of constraints");
  if (!list) return std::nullopt;
  return yaml_internal::ReadSequence(*list, "expected a list of constraints", ctx.diag);
}

void ConvertOr(const Field& f, std::vector<Constraint>& out, Context& ctx) {
  std::optional<std::vector<Field>> items = ReadList(f, ctx);
  if (!items) return;
  LabelConstraint any_of{"", ConstraintOp::kIn, {}, 0};
  const char* kWhy =
      "Paceline's constraints must all hold; an OR converts only when each item is a HOST "
      "label constraint saying the host has key=value for one key (then: host_label in "
      "[values]); split the job otherwise";
  for (const Field& item : *items) {
    MapReader m = PelotonMap(item, kConstraintKeys, "expected a constraint map", ctx);
    std::optional<Field> lc = Present(m, "labelConstraint");
    std::optional<LabelRule> rule = lc ? ReadLabelRule(*lc, ctx) : std::nullopt;
    if (!lc || (rule && rule->kind != kHost)) {
      ctx.diag.Error(item.loc, item.path, kWhy);
      return;
    }
    if (!rule) return;
    std::optional<bool> has = HostRuleMeaning(*lc, *rule, ctx);
    if (!has) return;
    if (!*has || (!any_of.label.empty() && any_of.label != rule->key)) {
      ctx.diag.Error(item.loc, item.path, kWhy);
      return;
    }
    any_of.label = rule->key;
    any_of.values.push_back(rule->value);
  }
  if (any_of.values.empty()) {
    ctx.diag.Error(f.loc, f.path, "is empty; expected at least one constraint");
    return;
  }
  out.push_back(std::move(any_of));
}

}  // namespace

void ConvertConstraint(const Field& f, const std::map<std::string, std::string>& labels,
                       std::vector<Constraint>& out, Context& ctx) {
  MapReader m =
      PelotonMap(f, kConstraintKeys,
                 "expected a map such as {type: LABEL_CONSTRAINT, labelConstraint: {...}}", ctx);
  if (!m.ok()) return;
  std::optional<Field> type = m.Require("type", "expected 1 (LABEL), 2 (AND) or 3 (OR)");
  std::optional<size_t> t = type ? ReadPelotonEnum(*type, kConstraintTypes, ctx) : std::nullopt;
  if (!t) return;
  constexpr std::array<absl::string_view, 4> kBodies = {"", "labelConstraint", "andConstraint",
                                                        "orConstraint"};
  if (*t == 0) {
    ctx.diag.Error(type->loc, type->path,
                   "is UNKNOWN_CONSTRAINT; expected 1 (LABEL), 2 (AND) or 3 (OR)");
    return;
  }
  std::optional<Field> body = m.Require(
      kBodies[*t],
      absl::StrCat("expected the ", kBodies[*t], " that type ", kConstraintTypes[*t], " names"));
  if (!body) return;
  if (*t == 1) {
    if (std::optional<LabelRule> r = ReadLabelRule(*body, ctx)) {
      ConvertLabelRule(*body, *r, labels, out, ctx);
    }
  } else if (*t == 2) {
    if (std::optional<std::vector<Field>> items = ReadList(*body, ctx)) {
      for (const Field& item : *items) ConvertConstraint(item, labels, out, ctx);
    }
  } else {
    ConvertOr(*body, out, ctx);
  }
}

}  // namespace paceline::peloton
