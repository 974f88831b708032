#include "placement/filters/labels_filter.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::placement {
bool LabelConstraintHolds(const LabelConstraint& c, std::optional<absl::string_view> v) {
  switch (c.op) {
    case ConstraintOp::kIn:
      return v && std::find(c.values.begin(), c.values.end(), *v) != c.values.end();
    case ConstraintOp::kNotIn:
      return !v || std::find(c.values.begin(), c.values.end(), *v) == c.values.end();
    case ConstraintOp::kExists:
      return v.has_value();
    case ConstraintOp::kNotExists:
      return !v.has_value();
    case ConstraintOp::kGt:
    case ConstraintOp::kLt: {
      double x = 0;
      if (!v || !absl::SimpleAtod(*v, &x)) return false;
      return c.op == ConstraintOp::kGt ? x > c.number : x < c.number;
    }
  }
  return false;
}

std::optional<Rejection> LabelsFilter::Check(const TaskContext& t, const HostState& h) const {
  const auto& cs = t.shape.label_constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!LabelConstraintHolds(cs[i], h.Label(cs[i].label))) return Reject(static_cast<uint16_t>(i));
  }
  return std::nullopt;
}

std::optional<Rejection> LabelsFilter::CheckEmpty(const TaskContext& t, const HostState& h) const {
  return Check(t, h);
}

std::string LabelsFilter::Describe(const TaskContext& t, const Rejection& r) const {
  if (r.reason >= t.shape.label_constraints.size()) return "label constraint";
  const LabelConstraint& c = t.shape.label_constraints[r.reason];
  std::string values = absl::StrCat("[", absl::StrJoin(c.values, " "), "]");
  switch (c.op) {
    case ConstraintOp::kIn:
      return absl::StrCat(c.label, " not in ", values);
    case ConstraintOp::kNotIn:
      return absl::StrCat(c.label, " in ", values);
    case ConstraintOp::kExists:
      return absl::StrCat("no label ", c.label);
    case ConstraintOp::kNotExists:
      return absl::StrCat("has label ", c.label);
    case ConstraintOp::kGt:
      return absl::StrCat(c.label, " not > ", c.number);
    case ConstraintOp::kLt:
      return absl::StrCat(c.label, " not < ", c.number);
  }
  return "label constraint";
}

}  // namespace paceline::placement
