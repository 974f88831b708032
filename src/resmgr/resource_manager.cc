#include "resmgr/resource_manager.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "spec/job_spec.h"
#include "spec/pool_path.h"

namespace paceline::resmgr {

ResourceManager::ResourceManager(ResourceManagerConfig config)
    : config_(config),
      preemptor_(state_, config_.preemption),
      admitter_(state_, preemptor_, config_.backfill, config_.backfill_depth) {
  PL_CHECK(config_.preemption.hysteresis_cycles >= 1) << "hysteresis_cycles must be >= 1";
  state_.pool(kRootPool);
}

std::string ResourceManager::WorkSummary(const PoolRuntime& p) const {
  return absl::StrCat(p.queue[0].size() + p.queue[1].size(), " queued gang(s), ", p.admitted_gangs,
                      " admitted");
}

absl::StatusOr<PoolId> ResourceManager::CreatePool(absl::string_view path, const PoolSpec& spec) {
  // Jobs only in leaf pools: a pool holding work cannot become a parent.
  const std::optional<PoolId> parent = spec::ValidatePoolPath(path).ok() && path != "/"
                                           ? tree_.Find(spec::ParentPath(path))
                                           : std::nullopt;
  if (parent.has_value()) {
    const PoolRuntime* p = state_.FindPool(*parent);
    if (p != nullptr && p->HasWork() && !tree_.Find(path).has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create pool ", path, ": pool ", tree_.path(*parent), " holds work (",
                       WorkSummary(*p), ") and jobs run only in leaf pools"));
    }
  }
  absl::StatusOr<PoolId> id = tree_.Create(path, spec);
  if (id.ok()) state_.pool(*id);
  return id;
}

absl::StatusOr<std::vector<std::string>> ResourceManager::UpdatePool(absl::string_view path,
                                                                     const PoolSpec& spec,
                                                                     bool force) {
  return tree_.Update(path, spec, force);
}

absl::Status ResourceManager::DeletePool(absl::string_view path) {
  if (std::optional<PoolId> id = tree_.Find(path)) {
    const PoolRuntime* p = state_.FindPool(*id);
    if (p != nullptr && p->HasWork()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pool ", path, " still holds work (", WorkSummary(*p), "); cancel or release it first"));
    }
    absl::Status s = tree_.Delete(path);
    if (s.ok()) {
      state_.ResetPool(*id);
      admitter_.ForgetPool(*id);
    }
    return s;
  }
  return tree_.Delete(path);  // the tree's own error (bad path, not found)
}

absl::Status ResourceManager::Enqueue(const GangRequest& r, absl::Time now) {
  RETURN_IF_ERROR(Check(r));
  state_.Add(r, next_seq_++, now);
  return absl::OkStatus();
}

absl::Status ResourceManager::Check(const GangRequest& r) const {
  if (state_.FindGang(r.id).has_value()) {
    return absl::AlreadyExistsError(absl::StrCat("gang ", r.id.value(), " is already known"));
  }
  if (r.tasks.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("gang ", r.id.value(), " has no tasks"));
  }
  if (r.priority < kMinPriority || r.priority > kMaxPriority) {
    return absl::InvalidArgumentError(absl::StrCat("gang ", r.id.value(), ": priority ", r.priority,
                                                   " is outside [", kMinPriority, ", ",
                                                   kMaxPriority, "]"));
  }
  if (!tree_.Exists(r.pool)) {
    return absl::NotFoundError(
        absl::StrCat("gang ", r.id.value(), ": pool id ", r.pool.value(), " does not exist"));
  }
  const std::string& path = tree_.path(r.pool);
  if (!tree_.IsLeaf(r.pool)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gang ", r.id.value(), ": pool ", path, " has child pools; jobs run only in leaf pools"));
  }
  Resources total;
  absl::flat_hash_set<TaskId> seen;
  for (const TaskRequest& t : r.tasks) {
    if (!t.resources.IsNonNegative()) {
      return absl::InvalidArgumentError(absl::StrCat("gang ", r.id.value(), ": task ",
                                                     t.id.ToString(), " asks negative resources (",
                                                     t.resources.ToString(), ")"));
    }
    if (r.tasks.size() > 1 && !seen.insert(t.id).second) {  // one task: no set to build
      return absl::InvalidArgumentError(
          absl::StrCat("gang ", r.id.value(), ": task ", t.id.ToString(), " appears twice"));
    }
    if (std::optional<RmState::TaskRef> ref = state_.FindTask(t.id)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "gang ", r.id.value(), ": task ", t.id.ToString(),
          " is already queued or holding resources in gang ", state_.gang(ref->slot).id.value()));
    }
    std::optional<Resources> sum = CheckedAdd(total, t.resources);
    if (!sum.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gang ", r.id.value(), ": total resources overflow"));
    }
    total = *sum;
  }
  if (r.max_running_instances > 0 && r.tasks.size() > r.max_running_instances) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gang ", r.id.value(), " has ", r.tasks.size(), " tasks, above job ", r.job.value(),
        "'s max_running_instances ", r.max_running_instances, "; it could never start"));
  }
  if (std::optional<WaitReason> never =
          FixedCapViolation(total, r.sla, r.controller, FixedCaps(tree_.spec(r.pool)))) {
    return absl::FailedPreconditionError(
        absl::StrCat("gang ", r.id.value(), ": ", DescribeWait(*never, path, r.job)));
  }
  return absl::OkStatus();
}

absl::Status ResourceManager::Adopt(const GangRequest& gang, absl::Time now) {
  RETURN_IF_ERROR(Check(gang));
  state_.Add(gang, next_seq_++, now, /*running_since=*/now);
  return absl::OkStatus();
}

absl::Status ResourceManager::Cancel(GangId gang) {
  std::optional<uint32_t> slot = state_.FindGang(gang);
  if (!slot.has_value()) {
    return absl::NotFoundError(absl::StrCat("gang ", gang.value(), " is not known"));
  }
  state_.Cancel(*slot);
  return absl::OkStatus();
}

absl::Status ResourceManager::BeginPreemption(GangId gang) {
  std::optional<uint32_t> slot = state_.FindGang(gang);
  if (!slot.has_value()) {
    return absl::NotFoundError(absl::StrCat("gang ", gang.value(), " is not known"));
  }
  const Gang& g = state_.gang(*slot);
  if (g.state == GangState::kPreempting) return absl::OkStatus();
  if (g.state != GangState::kAdmitted || g.sla == SlaClass::kNonPreemptible) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gang ", gang.value(), " is ", g.state == GangState::kQueued ? "queued" : "non-preemptible",
        " and cannot be preempted"));
  }
  state_.BeginPreemption(*slot, std::nullopt);
  return absl::OkStatus();
}

absl::Status ResourceManager::MarkRunning(const TaskId& task, absl::Time now) {
  std::optional<RmState::TaskRef> ref = state_.FindTask(task);
  if (!ref.has_value()) {
    return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " is not known"));
  }
  const resmgr::Gang& g = state_.gang(ref->slot);
  switch (g.tasks[ref->index].state) {
    case TaskState::kQueued:
      return absl::FailedPreconditionError(absl::StrCat(
          "task ", task.ToString(), " is queued (gang ", g.id.value(), "), not admitted"));
    case TaskState::kRunning:
      return absl::OkStatus();
    case TaskState::kAdmitted:
      state_.MarkRunning(*ref, now);
      return absl::OkStatus();
    case TaskState::kReleased:
      break;
  }
  return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " is not known"));
}

absl::Status ResourceManager::Release(const TaskId& task) {
  std::optional<RmState::TaskRef> ref = state_.FindTask(task);
  if (!ref.has_value()) {
    return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " is not known"));
  }
  const resmgr::Gang& g = state_.gang(ref->slot);
  if (g.state == GangState::kQueued) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task.ToString(), " is queued (gang ", g.id.value(),
                     ") and holds nothing; use Cancel to withdraw the gang"));
  }
  state_.ReleaseTask(*ref);
  return absl::OkStatus();
}

CycleResult ResourceManager::RunCycle(const CycleInput& input, absl::Time now) {
  ++cycle_;
  CycleResult result;
  result.cycle = cycle_;
  preemptor_.BeginCycle(tree_, now);

  const size_t slots = tree_.slot_count();
  demand_.assign(slots, Resources());
  allocation_.assign(slots, Resources());
  slack_demand_.assign(slots, Resources());
  for (PoolId leaf : tree_.layout().leaves) {
    const PoolRuntime* p = state_.FindPool(leaf);
    if (p == nullptr) continue;
    allocation_[leaf.value()] = p->alloc.regular();
    demand_[leaf.value()] = p->queued[0] + allocation_[leaf.value()];
    slack_demand_[leaf.value()] = p->queued[1] + p->alloc.revocable;
  }
  const Resources capacity = Max(input.capacity, Resources());
  usage_decay_.Advance(tree_, allocation_, capacity, now);
  last_ = &calculator_.Compute(tree_, {demand_, allocation_, slack_demand_, capacity,
                                       input.allocated_unused, usage_decay_.factors()});
  last_capacity_ = capacity;

  size_t queued = 0;
  for (PoolId leaf : tree_.layout().leaves) {
    if (const PoolRuntime* p = state_.FindPool(leaf))
      queued += p->queue[0].size() + p->queue[1].size();
  }
  result.admitted.reserve(queued);

  preemptor_.ReclaimExcess(tree_, *last_, result.preempted);
  admitter_.Run(
      tree_, *last_,
      AdmissionInput{cycle_, now, SubtractClamped(last_->slack_capacity, state_.total().revocable),
                     input.hosts},
      result.admitted, result.preempted);
  first_unseen_seq_ = next_seq_;
  result.pools = AllStats();
  return result;
}

std::vector<PoolStats> ResourceManager::AllStats() const {
  const PoolLayout& l = tree_.layout();
  std::vector<PoolStats> out(tree_.slot_count());
  auto from_last = [&](const std::vector<Resources>& v, uint32_t id) {
    return last_ != nullptr && id < v.size() ? v[id] : Resources();
  };
  for (size_t pos = l.id.size(); pos-- > 0;) {
    const PoolId id = l.id[pos];
    PoolStats& s = out[id.value()];
    s.id = id;
    const PoolSpec& spec = tree_.spec(id);
    s.reservation = id == kRootPool ? last_capacity_ : spec.Reservation();
    s.limit = id == kRootPool ? last_capacity_ : spec.Limit();
    for (Dim d : kAllDims) s.share[static_cast<int>(d)] = spec.dim(d).share;
    if (last_ != nullptr) {
      s.demand = from_last(last_->demand, id.value());
      s.entitlement = from_last(last_->entitlement, id.value());
      s.slack_demand = from_last(last_->slack_demand, id.value());
      s.slack_entitlement = from_last(last_->slack_entitlement, id.value());
    }
    if (l.child_begin[pos] == l.child_end[pos]) {
      if (const PoolRuntime* p = state_.FindPool(id)) {
        s.by_class = p->alloc;
        s.queued = p->queued[0];
        s.queued_revocable = p->queued[1];
        s.queued_gangs = static_cast<uint32_t>(p->queue[0].size() + p->queue[1].size());
        s.admitted_gangs = p->admitted_gangs;
        s.over_cycles = std::max(p->over_cycles[0], p->over_cycles[1]);
      }
    } else {
      for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) {
        const PoolStats& child = out[l.id[c].value()];
        s.by_class += child.by_class;
        s.queued += child.queued;
        s.queued_revocable += child.queued_revocable;
        s.queued_gangs += child.queued_gangs;
        s.admitted_gangs += child.admitted_gangs;
      }
    }
    s.allocation = s.by_class.regular();
  }
  return out;
}

absl::StatusOr<PoolStats> ResourceManager::Stats(PoolId pool) const {
  if (!tree_.Exists(pool)) {
    return absl::NotFoundError(absl::StrCat("pool id ", pool.value(), " does not exist"));
  }
  return AllStats()[pool.value()];
}

WaitReason ResourceManager::ResolveReason(const resmgr::Gang& g, const PoolRuntime& p) const {
  if (g.seq >= first_unseen_seq_) return WaitReason();  // kNotEvaluated
  if (g.reason.cycle == cycle_) return g.reason;
  const int li = static_cast<int>(g.ledger());
  if (p.pool_wait[li].cycle == cycle_) return p.pool_wait[li];
  const LaneBlock& block = p.lane_block[g.lane()];
  if (block.cycle == cycle_) {
    WaitReason r;
    r.code = block.code;
    r.other = block.head;
    r.at = block.at;
    r.cycle = cycle_;
    return r;
  }
  return g.reason;
}

QueuedGangView ResourceManager::ViewOf(const resmgr::Gang& g, const PoolRuntime& p,
                                       uint32_t position) const {
  QueuedGangView v;
  v.position = position;
  v.gang = g.id;
  v.job = g.job;
  v.priority = g.priority;
  v.sla = g.sla;
  v.controller = g.controller;
  v.tasks = static_cast<uint32_t>(g.tasks.size());
  v.resources = g.held;
  v.enqueued = g.enqueued;
  v.reason = ResolveReason(g, p);
  v.why = DescribeWait(v.reason, tree_.path(g.pool), g.job);
  return v;
}

absl::StatusOr<std::vector<QueuedGangView>> ResourceManager::Queue(PoolId pool) const {
  if (!tree_.Exists(pool)) {
    return absl::NotFoundError(absl::StrCat("pool id ", pool.value(), " does not exist"));
  }
  std::vector<QueuedGangView> out;
  const PoolRuntime* p = state_.FindPool(pool);
  if (p == nullptr) return out;
  uint32_t position = 0;
  for (const AdmissionQueue& q : p->queue) {
    for (const QueueEntry& e : q) out.push_back(ViewOf(state_.gang(e.slot), *p, ++position));
  }
  return out;
}

std::optional<GangId> ResourceManager::GangOf(const TaskId& task) const {
  std::optional<RmState::TaskRef> ref = state_.FindTask(task);  // never a released one
  if (!ref.has_value()) return std::nullopt;
  return state_.gang(ref->slot).id;
}

std::optional<GangMembers> ResourceManager::Members(GangId gang) const {
  std::optional<uint32_t> slot = state_.FindGang(gang);
  if (!slot.has_value()) return std::nullopt;
  const resmgr::Gang& g = state_.gang(*slot);
  GangMembers m;
  m.job = g.job;
  m.state = g.state;
  for (const TaskRecord& t : g.tasks) {
    if (t.state != TaskState::kReleased) m.tasks.push_back(t.id);
  }
  return m;
}

std::optional<GangState> ResourceManager::StateOf(GangId gang) const {
  std::optional<uint32_t> slot = state_.FindGang(gang);
  if (!slot.has_value()) return std::nullopt;
  return state_.gang(*slot).state;
}

absl::StatusOr<GangView> ResourceManager::DescribeGang(GangId gang) const {
  std::optional<uint32_t> slot = state_.FindGang(gang);
  if (!slot.has_value()) {
    return absl::NotFoundError(absl::StrCat("gang ", gang.value(), " is not known"));
  }
  const resmgr::Gang& g = state_.gang(*slot);
  GangView v;
  v.gang = g.id;
  v.job = g.job;
  v.pool = g.pool;
  v.state = g.state;
  v.sla = g.sla;
  v.priority = g.priority;
  v.held = g.held;
  v.live_tasks = g.live;
  if (g.state == GangState::kQueued) {
    const PoolRuntime& p = *state_.FindPool(g.pool);
    const AdmissionQueue& q = p.queue[static_cast<int>(g.ledger())];
    // Position: count the entries before it (its own queue, plus the regular queue for
    // revocable gangs, which the pool considers first).
    uint32_t position = 1;
    if (g.ledger() == Ledger::kRevocable) position += static_cast<uint32_t>(p.queue[0].size());
    for (const QueueEntry& e : q) {
      if (e.slot == *slot) break;
      ++position;
    }
    v.queued = ViewOf(g, p, position);
  }
  return v;
}

}  // namespace paceline::resmgr
