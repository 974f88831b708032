#include "placement/engine.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/check.h"
#include "placement/engine_internal.h"

namespace paceline::placement {

using engine_internal::kNever;
using engine_internal::kSelectiveRatio;
using engine_internal::NoKeys;
using engine_internal::NoTask;

PlacementEngine::StaticClass& PlacementEngine::StaticClassFor(
    const std::shared_ptr<const TaskShape>& shape) {
  auto& bucket = static_classes_[shape->static_signature];
  for (auto& s : bucket) {
    if (s->shape->StaticEquals(*shape)) return *s;
  }
  bucket.push_back(std::make_unique<StaticClass>());
  bucket.back()->shape = shape;
  return *bucket.back();
}

PlacementEngine::Class& PlacementEngine::ClassFor(const std::shared_ptr<const TaskShape>& shape,
                                                  ClusterSnapshot& snap) {
  if (shape.get() == last_shape_) return *last_class_;
  auto& bucket = classes_[shape->signature];
  Class* found = nullptr;
  for (auto& c : bucket) {
    if (c->shape == shape || *c->shape == *shape) {
      found = c.get();
      break;
    }
  }
  if (found == nullptr) {
    auto c = std::make_unique<Class>();
    c->shape = shape;
    c->st = &StaticClassFor(shape);
    ++c->st->refs;
    for (const auto& [k, v] : shape->job_labels) {
      c->keys.job_label_pairs.push_back(snap.InternLabelPair(k, v));
    }
    for (const MaxPerHostConstraint& m : shape->max_per_host) {
      AntiAffinityKey key;
      key.max_per_host = m.max_per_host;
      if (!m.task_label.empty()) {
        key.per_job = false;
        absl::string_view value;
        for (const auto& [k, v] : shape->job_labels) {
          if (k == m.task_label) value = v;
        }
        key.label_pair = snap.InternLabelPair(m.task_label, value);
      }
      c->keys.max_per_host.push_back(key);
    }
    c->rotating = !shape->max_per_host.empty();
    found = c.get();
    bucket.push_back(std::move(c));
    ++num_classes_;
  }
  last_shape_ = shape.get();
  last_class_ = found;
  return *found;
}

bool PlacementEngine::PassesStatic(const TaskContext& t, const HostState& h) const {
  const auto& fs = profile_.filters();
  for (size_t i = 0; i < profile_.num_static_filters(); ++i) {
    if (fs[i]->Check(t, h)) return false;
  }
  return true;
}

bool PlacementEngine::PassesStaticFilters(const TaskShape& shape, const HostState& h) const {
  return PassesStatic(TaskContext{engine_internal::NoTask(), shape, engine_internal::NoKeys()}, h);
}

bool PlacementEngine::PassesDynamic(const TaskContext& t, const HostState& h) const {
  const auto& fs = profile_.filters();
  for (size_t i = profile_.num_static_filters(); i < fs.size(); ++i) {
    if (fs[i]->Check(t, h)) return false;
  }
  return true;
}

bool PlacementEngine::Feasible(const TaskContext& t, const StaticClass& st,
                               const ClusterSnapshot& snap, uint32_t slot) const {
  return slot < st.pass.size() && st.pass[slot] && PassesDynamic(t, snap.host_at(slot));
}

bool PlacementEngine::StillFails(const TaskContext& t, Class& cls,
                                 const ClusterSnapshot& snap) const {
  if (cls.failed_relax == kNever) return false;
  std::optional<std::span<const uint32_t>> relaxed = snap.RelaxedSince(cls.failed_relax);
  if (!relaxed || relaxed->size() > snap.num_hosts() / 4) {
    cls.failed_relax = kNever;
    return false;
  }
  for (uint32_t slot : *relaxed) {
    if (Feasible(t, *cls.st, snap, slot)) {
      cls.failed_relax = kNever;
      return false;
    }
  }
  cls.failed_relax = snap.relax_seq();
  return true;
}

void PlacementEngine::SyncStatic(StaticClass& st, const ClusterSnapshot& snap) {
  const uint32_t n = snap.slots();
  TaskContext ctx{NoTask(), *st.shape, NoKeys()};
  std::optional<std::span<const uint32_t>> changes;
  if (st.built) changes = snap.StaticChangesSince(st.synced_seq);
  if (changes && changes->size() <= n / 4 + 16) {
    st.pass.resize(n, 0);
    st.in_list.resize(n, 0);
    for (uint32_t slot : *changes) {
      bool now = snap.present(slot) && PassesStatic(ctx, snap.host_at(slot));
      if (now != static_cast<bool>(st.pass[slot])) {
        st.pass_count += now ? 1 : -1;
        st.pass[slot] = now;
      }
      if (now && !st.in_list[slot]) {
        st.in_list[slot] = 1;
        st.list.push_back(slot);
      }
    }
  } else {
    st.pass.assign(n, 0);
    st.in_list.assign(n, 0);
    st.list.clear();
    st.pass_count = 0;
    // A selective `in` constraint: only hosts carrying one of its values can pass.
    std::vector<uint32_t> seed;
    bool seeded = false;
    for (const LabelConstraint& c : st.shape->label_constraints) {
      if (c.op != ConstraintOp::kIn) continue;
      std::vector<uint32_t> hosts;
      for (const std::string& v : c.values) {
        if (const std::vector<uint32_t>* hs = snap.HostsWithLabel(c.label, v)) {
          hosts.insert(hosts.end(), hs->begin(), hs->end());
        }
      }
      if (!seeded || hosts.size() < seed.size()) {
        seed = std::move(hosts);
        seeded = true;
      }
    }
    auto consider = [&](uint32_t slot) {
      if (st.pass[slot] || !snap.present(slot) || !PassesStatic(ctx, snap.host_at(slot))) return;
      st.pass[slot] = 1;
      st.in_list[slot] = 1;
      st.list.push_back(slot);
      ++st.pass_count;
    };
    if (seeded) {
      for (uint32_t slot : seed) consider(slot);
    } else {
      for (uint32_t slot = 0; slot < n; ++slot) consider(slot);
    }
  }
  st.built = true;
  st.synced_seq = snap.static_seq();
  st.synced_plan = plan_seq_;
}

void PlacementEngine::Collect(const TaskContext& t, Class& cls, const ClusterSnapshot& snap,
                              std::vector<uint32_t>& out, PlanStats& stats) {
  const StaticClass& st = *cls.st;
  // Revocable work walks the index of unallocated capacity plus slack (host_state.h).
  const FreeIndex& index = snap.free_index(t.shape.revocable);
  if (t.task.required_host) {
    ++stats.hosts_visited;
    uint32_t slot = t.task.required_host->value();
    if (Feasible(t, st, snap, slot)) out.push_back(slot);
    return;
  }
  uint32_t prev = std::numeric_limits<uint32_t>::max();
  if (t.task.previous) {
    ++stats.hosts_visited;
    uint32_t slot = t.task.previous->host.value();
    if (Feasible(t, st, snap, slot)) {
      out.push_back(slot);
      prev = slot;
    }
  }
  const size_t limit = max_candidates_ == std::numeric_limits<uint32_t>::max()
                           ? std::numeric_limits<size_t>::max()
                           : out.size() + max_candidates_;
  const Resources& ask = t.shape.resources;
  const WalkOrder walk = profile_.spec().walk;
  const bool selective = uint64_t{st.pass_count} * kSelectiveRatio < index.size();
  // A GPU task that may run on several models shares its sample among them (model_sample.h);
  // the walk then stops after kWalkFactor x max_candidates hosts at the latest.
  const bool by_model = max_candidates_ != std::numeric_limits<uint32_t>::max() &&
                        SamplesByModel(t, snap) && sample_.Begin(t, snap, max_candidates_);
  const uint64_t visit_cap =
      by_model ? stats.hosts_visited + ModelSample::kWalkFactor * uint64_t{max_candidates_}
               : std::numeric_limits<uint64_t>::max();
  auto joins = [&](uint32_t slot) { return !by_model || sample_.Admit(snap.host_at(slot)); };
  auto take = [&](uint32_t slot) {  // true when enough candidates were found
    ++stats.hosts_visited;
    if (slot != prev && Feasible(t, st, snap, slot) && joins(slot)) out.push_back(slot);
    return out.size() >= limit || stats.hosts_visited >= visit_cap;
  };
  // Round-robin over `list` from the class cursor. A packing class restarts at its first
  // feasible host (the hosts before it are full); a rotating class (anti-affinity, random)
  // continues after the hosts it just looked at, like Nomad's rotating iterator, so hosts it
  // already used are not walked again and again.
  const bool rotating = cls.rotating || walk == WalkOrder::kRotating;
  auto rotate = [&](std::span<const uint32_t> list) {
    const size_t n = list.size();
    if (n == 0) return;
    size_t pos = cls.cursor % n;
    bool moved = false;
    for (size_t i = 0; i < n; ++i, ++pos) {
      if (pos == n) pos = 0;
      const size_t before = out.size();
      const bool full = take(list[pos]);
      if (!moved && out.size() > before) {
        cls.cursor = static_cast<uint32_t>(pos);
        moved = true;
      }
      if (full) {
        if (rotating) cls.cursor = static_cast<uint32_t>((pos + 1) % n);
        return;
      }
    }
  };
  if (selective) {
    rotate(st.list);
    return;
  }
  if (ask.IsZero()) {
    rotate(index.members());
    return;
  }

  // The task's scarcest dimension: the fewest UP hosts have enough free in it.
  if (cls.walk_dim_plan != plan_seq_) {
    uint32_t best = std::numeric_limits<uint32_t>::max();
    for (int d = 0; d < kNumDims; ++d) {
      if (ask.at(d) <= 0) continue;
      uint32_t c = index.CountAtLeast(static_cast<Dim>(d), FreeIndex::Level(ask.at(d)));
      if (c < best) {
        best = c;
        cls.walk_dim = d;
      }
    }
    cls.walk_dim_plan = plan_seq_;
  }
  const Dim dim = static_cast<Dim>(cls.walk_dim);
  const int low = FreeIndex::Level(ask.at(cls.walk_dim));
  const int high = index.MaxLevel(dim);
  if (low > high) return;

  if (rotating) {
    const uint32_t qualifying = index.CountAtLeast(dim, low);
    if (uint64_t{qualifying} * 2 >= index.size()) {
      rotate(index.members());  // stable order within a plan: amortised O(1) for anti-affinity
      return;
    }
    // Round-robin over the concatenation of the buckets [low, high].
    if (qualifying == 0) return;
    size_t pos = cls.cursor % qualifying;
    int level = low;
    while (pos >= index.Bucket(dim, level).size()) pos -= index.Bucket(dim, level++).size();
    size_t offset = pos;
    const uint32_t start = cls.cursor % qualifying;
    bool moved = false;
    for (uint32_t i = 0; i < qualifying; ++i, ++offset) {
      while (offset >= index.Bucket(dim, level).size()) {
        offset = 0;
        level = level == high ? low : level + 1;
      }
      const size_t before = out.size();
      const bool full = take(index.Bucket(dim, level)[offset]);
      if (!moved && out.size() > before) {
        cls.cursor = (start + i) % qualifying;
        moved = true;
      }
      if (full) {
        cls.cursor = (start + i + 1) % qualifying;
        return;
      }
    }
    return;
  }

  // Bucket walk: tightest-first (ascending levels) or loosest-first (descending). Hosts of the
  // ask's own bucket that are short in the walk dimension are skipped on their kept keys.
  const int64_t need = ask.at(cls.walk_dim);
  auto visit = [&](int level) {
    const std::span<const uint32_t> slots = index.Bucket(dim, level);
    const std::span<const int64_t> keys = index.BucketKeys(dim, level);
    for (size_t k = 0; k < slots.size(); ++k) {
      if (keys[k] < need) continue;
      const uint32_t slot = slots[k];
      ++stats.hosts_visited;
      if (slot != prev && st.pass[slot] && PassesDynamic(t, snap.host_at(slot)) && joins(slot)) {
        out.push_back(slot);
        if (out.size() >= limit) return true;
      }
      if (stats.hosts_visited >= visit_cap) return true;
    }
    return false;
  };
  if (walk == WalkOrder::kLoosestFirst) {
    for (int level = high; level >= low; --level) {
      if (visit(level)) return;
    }
  } else {
    for (int level = low; level <= high; ++level) {
      if (visit(level)) return;
    }
  }
}

void PlacementEngine::GpuOptions(const TaskContext& t, const HostState& h,
                                 std::vector<GpuShares>& out) const {
  const int64_t ask = t.shape.gpu_milli();
  if (ask == 0) {
    out.emplace_back();
    return;
  }
  const auto& devs = h.gpus();
  auto allowed = [&](const GpuDevice& d) { return t.shape.AcceptsGpuModel(d.model); };
  if (ask >= kMilliPerGpu) {
    GpuShares s;
    const int64_t n = ask / kMilliPerGpu;
    for (size_t i = 0; i < devs.size() && static_cast<int64_t>(s.size()) < n; ++i) {
      if (allowed(devs[i]) && devs[i].whole_free()) {
        s.push_back(GpuShare{static_cast<uint16_t>(i), static_cast<int32_t>(kMilliPerGpu)});
      }
    }
    PL_CHECK(static_cast<int64_t>(s.size()) == n) << "gpu_devices passed a host without devices";
    out.push_back(std::move(s));
    return;
  }
  if (!profile_.any_device_aware()) {
    int best = -1;
    for (size_t i = 0; i < devs.size(); ++i) {
      if (!allowed(devs[i]) || devs[i].free_milli() < ask) continue;
      if (best < 0 || devs[i].free_milli() < devs[best].free_milli()) best = static_cast<int>(i);
    }
    PL_CHECK(best >= 0) << "gpu_devices passed a host without a device";
    out.push_back(GpuShares{GpuShare{static_cast<uint16_t>(best), static_cast<int32_t>(ask)}});
    return;
  }
  const size_t first = out.size();
  for (size_t i = 0; i < devs.size(); ++i) {
    if (!allowed(devs[i]) || devs[i].free_milli() < ask) continue;
    bool same = false;
    for (size_t k = first; k < out.size() && !same; ++k) {
      const GpuDevice& o = devs[out[k].front().device];
      same = o.milli_allocated == devs[i].milli_allocated && o.model == devs[i].model;
    }
    if (!same) {
      out.push_back(GpuShares{GpuShare{static_cast<uint16_t>(i), static_cast<int32_t>(ask)}});
    }
  }
  PL_CHECK(out.size() > first) << "gpu_devices passed a host without a device";
}

bool PlacementEngine::SamplesByModel(const TaskContext& t, const ClusterSnapshot& snap) const {
  return model_pressure_ >= 0 && profile_.weights()[model_pressure_] != 0 &&
         profile_.scorers()[model_pressure_]->Applies(t, snap, env_);
}

void PlacementEngine::KeepHeldFor(uint64_t gang, const ClusterSnapshot& snap,
                                  std::vector<uint32_t>& candidates) {
  auto own = [&](uint32_t slot) { return snap.host_at(slot).held_for() == gang; };
  if (std::any_of(candidates.begin(), candidates.end(), own)) {
    std::erase_if(candidates, [&](uint32_t slot) { return !own(slot); });
  }
}

std::optional<PlacementEngine::Choice> PlacementEngine::Choose(const TaskContext& t,
                                                               const ClusterSnapshot& snap,
                                                               std::span<const uint32_t> candidates,
                                                               PlanStats& stats) {
  const auto& scorers = profile_.scorers();
  const auto& weights = profile_.weights();
  // The weights of the scorers that tell hosts apart for this task (0: not run).
  active_weights_.resize(scorers.size());
  for (size_t i = 0; i < scorers.size(); ++i) {
    active_weights_[i] = weights[i] != 0 && scorers[i]->Applies(t, snap, env_) ? weights[i] : 0;
  }
  env_.sequence = sequence_;
  std::optional<Choice> best;
  double best_score = 0;
  for (uint32_t slot : candidates) {
    const HostState& h = snap.host_at(slot);
    options_.clear();
    GpuOptions(t, h, options_);
    for (GpuShares& option : options_) {
      ScoreInput in{t, h, option, env_};
      double score = 0;
      for (size_t i = 0; i < scorers.size(); ++i) {
        if (active_weights_[i] != 0) score += active_weights_[i] * scorers[i]->Score(in);
      }
      ++stats.candidates_scored;
      if (!best || score > best_score) {
        best_score = score;
        best = Choice{slot, std::move(option)};
      }
    }
  }
  return best;
}

Plan PlacementEngine::Place(std::span<const PlacementRequest> requests, ClusterSnapshot& snap) {
  Plan plan;
  BeginPlace(requests, snap);
  for (uint32_t ri = 0; ri < requests.size(); ++ri) {
    const PlacementRequest& req = requests[ri];
    if (req.tasks.empty()) continue;
    const size_t hold_mark = holds_.size();
    const size_t assign_mark = plan.assignments.size();
    uint32_t placed = 0;
    std::optional<Explanation> failure;
    for (const PlacementTask& task : req.tasks) {
      PL_CHECK(task.shape != nullptr) << "task " << task.id.ToString() << " has no shape";
      Class& cls = ClassFor(task.shape, snap);
      cls.last_plan = plan_seq_;
      if (cls.st->synced_plan != plan_seq_) SyncStatic(*cls.st, snap);
      const TaskContext ctx{task, *task.shape, cls.keys};
      // A gang with held hosts may use hosts its class may not: its failures say nothing of
      // the class.
      const bool held = snap.HoldsHostsFor(task.gang);
      const bool cacheable = !task.required_host.has_value() && !held;
      // A failure holds for tasks that end no earlier (held hosts take those that end early).
      if (cacheable && task.ends_by >= cls.failed_ends_by &&
          (cls.failed_epoch == epoch_ || StillFails(ctx, cls, snap))) {
        ++plan.stats.class_hits;
        if (req.explain && !cls.failure.explained) {  // failed for a request that asked none
          ++plan.stats.explain_scans;
          cls.failure = Explain(ctx, *cls.st, snap);
        }
        failure = cls.failure;
        break;
      }
      candidates_.clear();
      Collect(ctx, cls, snap, candidates_, plan.stats);
      if (held) KeepHeldFor(task.gang, snap, candidates_);
      std::optional<Choice> choice;
      if (!candidates_.empty()) choice = Choose(ctx, snap, candidates_, plan.stats);
      ++sequence_;
      if (!choice) {
        Explanation e;
        if (req.explain) {
          ++plan.stats.explain_scans;
          e = Explain(ctx, *cls.st, snap);
        } else {
          e.explained = false;
        }
        if (cacheable) {
          cls.failure = e;
          cls.failed_epoch = epoch_;
          cls.failed_ends_by = task.ends_by;
          // Holds of earlier requests of this plan become commitments; holds of this gang are
          // rolled back below, so a failure that saw them says nothing about later plans.
          cls.failed_relax = placed == 0 ? snap.relax_seq() : kNever;
        }
        failure = std::move(e);
        break;
      }
      const HostState& h = snap.host_at(choice->slot);
      Usage u;
      u.resources = task.shape->resources;
      u.revocable = task.shape->revocable;
      u.job = task.shape->job;
      u.SetExtras(choice->gpus, h.PickPorts(task.shape->num_ports()), cls.keys.job_label_pairs);
      plan.assignments.push_back(Assignment{task.id, HostId(choice->slot), task.shape,
                                            std::move(choice->gpus), u.ports(), ri});
      snap.Hold(choice->slot, u);
      holds_.push_back(Hold{choice->slot, std::move(u)});
      ++placed;
    }
    if (failure) {
      for (size_t k = holds_.size(); k > hold_mark; --k) {
        snap.Unhold(holds_[k - 1].slot, holds_[k - 1].usage, /*rollback=*/true);
      }
      holds_.resize(hold_mark);
      plan.assignments.resize(assign_mark);
      if (placed > 0) ++epoch_;  // capacity came back: cached failures are stale
      PendingRequest p;
      p.request_index = ri;
      p.tasks.reserve(req.tasks.size());
      for (const PlacementTask& t : req.tasks) p.tasks.push_back(t.id);
      p.explanation = std::move(*failure);
      p.explanation.gang_size = static_cast<uint32_t>(req.tasks.size());
      p.explanation.gang_placed = placed;
      plan.pending.push_back(std::move(p));
    }
  }
  EndPlace(snap);
  return plan;
}

}  // namespace paceline::placement
