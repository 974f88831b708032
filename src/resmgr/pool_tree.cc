#include "resmgr/pool_tree.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/units.h"
#include "spec/pool_path.h"

namespace paceline::resmgr {
namespace {

int64_t PercentOf(int64_t amount, double percent) {
  if (amount == kUnlimited) return kUnlimited;
  return static_cast<int64_t>(std::floor(static_cast<long double>(amount) * percent / 100.0L));
}

absl::Status ValidatePercent(absl::string_view path, absl::string_view what,
                             const std::optional<double>& percent) {
  if (!percent.has_value()) return absl::OkStatus();
  if (!std::isfinite(*percent) || *percent <= 0 || *percent > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool ", path, ": ", what, " ", *percent, "% must be in (0, 100]"));
  }
  return absl::OkStatus();
}

std::string Q(Dim d, int64_t v) { return FormatQuantity(d, v); }

}  // namespace

Resources ControllerCap(const PoolSpec& spec) {
  if (!spec.controller_limit_percent.has_value()) return Resources::Filled(kUnlimited);
  Resources cap;
  for (Dim d : kAllDims)
    cap[d] = PercentOf(spec.dim(d).reservation, *spec.controller_limit_percent);
  return cap;
}

Resources SlackCap(const PoolSpec& spec) {
  Resources cap = spec.Limit();
  if (!spec.slack_limit_percent.has_value()) return cap;
  for (Dim d : kAllDims) {
    if (d == Dim::kCpu) continue;
    cap[d] = std::min(cap[d], PercentOf(spec.dim(d).reservation, *spec.slack_limit_percent));
  }
  return cap;
}

absl::Status ValidatePoolSpec(absl::string_view path, const PoolSpec& spec) {
  for (Dim d : kAllDims) {
    const DimSpec& ds = spec.dim(d);
    if (ds.reservation < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pool ", path, ": ", DimName(d), " reservation ", ds.reservation, " is negative"));
    }
    if (ds.limit < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("pool ", path, ": ", DimName(d), " limit ", ds.limit, " is negative"));
    }
    if (ds.reservation > ds.limit) {
      return absl::InvalidArgumentError(absl::StrCat("pool ", path, ": ", DimName(d),
                                                     " reservation ", Q(d, ds.reservation),
                                                     " exceeds limit ", Q(d, ds.limit)));
    }
    if (!std::isfinite(ds.share) || ds.share <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("pool ", path, ": ", DimName(d), " share ",
                                                     ds.share, " must be a positive number"));
    }
  }
  if (auto s = ValidatePercent(path, "controller_limit", spec.controller_limit_percent); !s.ok()) {
    return s;
  }
  return ValidatePercent(path, "slack_limit", spec.slack_limit_percent);
}

PoolTree::PoolTree() {
  Node root;
  root.alive = true;
  root.path = "/";
  root.parent = kRootPool;
  nodes_.push_back(std::move(root));
  by_path_.emplace("/", kRootPool);
  live_ = 1;
}

const PoolTree::Node& PoolTree::node(PoolId id) const {
  PL_CHECK(Exists(id)) << "unknown pool id " << id.value();
  return nodes_[id.value()];
}

bool PoolTree::Exists(PoolId id) const {
  return id.value() < nodes_.size() && nodes_[id.value()].alive;
}
const PoolSpec& PoolTree::spec(PoolId id) const { return node(id).spec; }
const std::string& PoolTree::path(PoolId id) const { return node(id).path; }
PoolId PoolTree::parent(PoolId id) const { return node(id).parent; }
const std::vector<PoolId>& PoolTree::children(PoolId id) const { return node(id).children; }
int PoolTree::depth(PoolId id) const { return node(id).depth; }

std::optional<PoolId> PoolTree::Find(absl::string_view path) const {
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<PoolId> PoolTree::Lookup(absl::string_view path) const {
  if (auto id = Find(path)) return *id;
  return absl::NotFoundError(absl::StrCat("pool ", path, " does not exist"));
}

std::vector<std::string> PoolTree::RelationalViolations(PoolId parent_id,
                                                        std::optional<PoolId> self,
                                                        absl::string_view path,
                                                        const PoolSpec& spec, int checks) const {
  std::vector<std::string> out;
  const Node& parent = node(parent_id);
  const bool below_root = parent_id != kRootPool;
  for (Dim d : kAllDims) {
    const DimSpec& mine = spec.dim(d);
    if (below_root) {
      // A child's limit <= its parent's limit.
      const int64_t parent_limit = parent.spec.dim(d).limit;
      if ((checks & kCheckParentLimit) && mine.limit > parent_limit) {
        out.push_back(absl::StrCat("pool ", path, ": ", DimName(d), " limit ", Q(d, mine.limit),
                                   " exceeds the ", DimName(d), " limit ", Q(d, parent_limit),
                                   " of parent ", parent.path));
      }
      // The siblings' reservations, with this one, fit the parent's reservation.
      __int128 sum = mine.reservation;
      for (PoolId sibling : parent.children) {
        if (self.has_value() && sibling == *self) continue;
        sum += node(sibling).spec.dim(d).reservation;
      }
      const int64_t parent_res = parent.spec.dim(d).reservation;
      if ((checks & kCheckSiblingReservations) && sum > parent_res) {
        const __int128 siblings = sum - mine.reservation;
        out.push_back(absl::StrCat(
            "pool ", path, ": ", DimName(d), " reservation ", Q(d, mine.reservation),
            " plus the siblings' ",
            siblings > kUnlimited ? "(overflow)" : Q(d, static_cast<int64_t>(siblings)),
            " exceeds the ", DimName(d), " reservation ", Q(d, parent_res), " of parent ",
            parent.path));
      }
    }
    if (self.has_value() && *self != kRootPool) {
      // The children still fit under this pool.
      __int128 children_res = 0;
      for (PoolId c : node(*self).children) {
        const Node& child = node(c);
        children_res += child.spec.dim(d).reservation;
        if ((checks & kCheckChildLimits) && child.spec.dim(d).limit > mine.limit) {
          out.push_back(absl::StrCat("pool ", path, ": ", DimName(d), " limit ", Q(d, mine.limit),
                                     " is below the ", DimName(d), " limit ",
                                     Q(d, child.spec.dim(d).limit), " of child ", child.path));
        }
      }
      if ((checks & kCheckChildReservations) && children_res > mine.reservation) {
        out.push_back(absl::StrCat(
            "pool ", path, ": ", DimName(d), " reservation ", Q(d, mine.reservation),
            " is below the sum ",
            children_res > kUnlimited ? "(overflow)" : Q(d, static_cast<int64_t>(children_res)),
            " of its children's reservations"));
      }
    }
  }
  return out;
}

absl::StatusOr<PoolId> PoolTree::Create(absl::string_view path, const PoolSpec& spec) {
  if (auto s = spec::ValidatePoolPath(path); !s.ok()) return s;
  if (path == "/") return absl::AlreadyExistsError("pool / (the root) always exists");
  if (Find(path).has_value()) {
    return absl::AlreadyExistsError(absl::StrCat("pool ", path, " already exists"));
  }
  const absl::string_view parent_path = spec::ParentPath(path);
  const std::optional<PoolId> parent = Find(parent_path);
  if (!parent.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("cannot create pool ", path, ": parent ", parent_path, " does not exist"));
  }
  if (auto s = ValidatePoolSpec(path, spec); !s.ok()) return s;
  std::vector<std::string> broken =
      RelationalViolations(*parent, std::nullopt, path, spec, kCheckAll);
  if (!broken.empty()) return absl::FailedPreconditionError(absl::StrJoin(broken, "; "));

  const PoolId id(static_cast<uint32_t>(nodes_.size()));
  Node n;
  n.alive = true;
  n.path = std::string(path);
  n.spec = spec;
  n.parent = *parent;
  n.depth = node(*parent).depth + 1;
  nodes_.push_back(std::move(n));
  nodes_[parent->value()].children.push_back(id);
  by_path_.emplace(std::string(path), id);
  ++live_;
  Changed();
  return id;
}

absl::StatusOr<std::vector<std::string>> PoolTree::Update(absl::string_view path,
                                                          const PoolSpec& spec, bool force) {
  if (auto s = spec::ValidatePoolPath(path); !s.ok()) return s;
  if (path == "/") {
    return absl::FailedPreconditionError(
        "pool / (the root) cannot be updated: its entitlement is the cluster capacity");
  }
  auto id = Lookup(path);
  if (!id.ok()) return id.status();
  if (auto s = ValidatePoolSpec(path, spec); !s.ok()) return s;
  std::vector<std::string> broken = RelationalViolations(parent(*id), *id, path, spec, kCheckAll);
  if (!broken.empty() && !force) {
    return absl::FailedPreconditionError(
        absl::StrCat(absl::StrJoin(broken, "; "), " (use force to apply anyway)"));
  }
  nodes_[id->value()].spec = spec;
  Changed();
  return broken;
}

absl::Status PoolTree::Delete(absl::string_view path) {
  if (auto s = spec::ValidatePoolPath(path); !s.ok()) return s;
  if (path == "/") return absl::FailedPreconditionError("pool / (the root) cannot be deleted");
  auto id = Lookup(path);
  if (!id.ok()) return id.status();
  Node& n = nodes_[id->value()];
  if (!n.children.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("pool ", path, " has ", n.children.size(),
                                                      " child pool(s); delete them first"));
  }
  std::vector<PoolId>& siblings = nodes_[n.parent.value()].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), *id));
  by_path_.erase(n.path);
  n = Node();
  --live_;
  Changed();
  return absl::OkStatus();
}

std::vector<std::string> PoolTree::Violations() const {
  std::vector<std::string> out;
  for (PoolId id : layout().id) {
    const Node& n = node(id);
    // Each rule once: a pool's limit against its parent's, its children's reservations
    // against its own.
    for (std::string& v : RelationalViolations(n.parent, id, n.path, n.spec,
                                               kCheckParentLimit | kCheckChildReservations)) {
      out.push_back(std::move(v));
    }
  }
  return out;
}

const PoolLayout& PoolTree::layout() const {
  if (!layout_dirty_) return layout_;
  PoolLayout& l = layout_;
  l.id.clear();
  l.parent.clear();
  l.child_begin.clear();
  l.child_end.clear();
  l.leaves.clear();
  l.reservation.clear();
  l.limit.clear();
  l.slack_cap.clear();
  l.share.clear();
  l.is_static.clear();
  l.position.assign(nodes_.size(), PoolLayout::kNoPosition);
  l.id.push_back(kRootPool);
  l.parent.push_back(0);
  for (size_t pos = 0; pos < l.id.size(); ++pos) {
    const Node& n = nodes_[l.id[pos].value()];
    l.position[l.id[pos].value()] = static_cast<uint32_t>(pos);
    l.child_begin.push_back(static_cast<uint32_t>(l.id.size()));
    for (PoolId c : n.children) {
      l.id.push_back(c);
      l.parent.push_back(static_cast<uint32_t>(pos));
    }
    l.child_end.push_back(static_cast<uint32_t>(l.id.size()));
    if (n.children.empty()) l.leaves.push_back(l.id[pos]);
    l.reservation.push_back(n.spec.Reservation());
    l.limit.push_back(n.spec.Limit());
    l.slack_cap.push_back(SlackCap(n.spec));
    std::array<double, kNumDims> share;
    for (Dim d : kAllDims) share[static_cast<int>(d)] = n.spec.dim(d).share;
    l.share.push_back(share);
    l.is_static.push_back(n.spec.type == PoolType::kStatic ? 1 : 0);
  }
  layout_dirty_ = false;
  return l;
}

}  // namespace paceline::resmgr
