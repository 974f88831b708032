// PlacementEngine: what is not on the hot path of a placement — creating the engine, the start
// and end of a plan (the workload seen so far, the eviction of unused classes) and the
// explanation of a task that fits nowhere (see engine.h for the whole pipeline).
#include <algorithm>
#include <utility>

#include "common/check.h"
#include "placement/engine_internal.h"

namespace paceline::placement {

using engine_internal::kEvictAfterPlans;
using engine_internal::kMaxClasses;

absl::StatusOr<std::unique_ptr<PlacementEngine>> PlacementEngine::Create(EngineConfig config) {
  absl::StatusOr<Profile> profile = config.custom_profile ? Profile::Build(*config.custom_profile)
                                                          : Profile::Named(config.profile);
  if (!profile.ok()) return profile.status();
  return std::unique_ptr<PlacementEngine>(
      new PlacementEngine(std::move(config), std::move(*profile)));
}

PlacementEngine::PlacementEngine(EngineConfig config, Profile profile)
    : config_(std::move(config)), profile_(std::move(profile)) {
  env_.seed = config_.seed;
  if (config_.workload) {
    env_.workload = &*config_.workload;
    env_.workload_generation = 1;
  } else {
    env_.workload = &frozen_;
  }
  max_candidates_ = CandidateLimit();
  const auto& scorers = profile_.scorers();
  for (size_t i = 0; i < scorers.size(); ++i) {
    if (scorers[i]->name() == "gpu_model_pressure") model_pressure_ = static_cast<int>(i);
  }
}

uint32_t PlacementEngine::CandidateLimit() const {
  const ProfileSpec& spec = profile_.spec();
  uint32_t k = spec.gpu_max_candidates != 0 && workload().has_gpu_tasks() ? spec.gpu_max_candidates
                                                                          : spec.max_candidates;
  k = config_.max_candidates.value_or(k);
  return k == 0 ? std::numeric_limits<uint32_t>::max() : k;
}

PlacementEngine::~PlacementEngine() = default;

const GpuWorkload& PlacementEngine::workload() const {
  return config_.workload ? *config_.workload : frozen_;
}

void PlacementEngine::BeginPlace(std::span<const PlacementRequest> requests,
                                 ClusterSnapshot& snap) {
  if (snapshot_.lock() != snap.identity().lock()) {
    classes_.clear();
    static_classes_.clear();
    num_classes_ = 0;
    snapshot_ = snap.identity();
    for (const auto& s : profile_.scorers()) s->ResetCaches();
  }
  last_shape_ = nullptr;
  last_class_ = nullptr;
  ++plan_seq_;
  ++epoch_;
  if (!config_.workload) {
    const TaskShape* run = nullptr;
    double n = 0;
    auto flush = [&] {
      if (run != nullptr) learned_.Add(run->resources, run->gpu_models, n);
    };
    for (const PlacementRequest& r : requests) {
      for (const PlacementTask& t : r.tasks) {
        if (t.shape.get() == run) {
          ++n;
          continue;
        }
        flush();
        run = t.shape.get();
        n = 1;
      }
    }
    flush();
    if (run != nullptr) ++learned_generation_;
    if (learned_generation_ != frozen_generation_) {
      frozen_ = learned_.Top(kLearnedTypes);
      frozen_generation_ = learned_generation_;
    }
    env_.workload_generation = frozen_generation_;
  }
  max_candidates_ = CandidateLimit();
  if (num_classes_ > kMaxClasses) Evict();
}

void PlacementEngine::EndPlace(ClusterSnapshot& snap) {
  for (size_t k = holds_.size(); k > 0; --k) {
    snap.Unhold(holds_[k - 1].slot, holds_[k - 1].usage, /*rollback=*/false);
  }
  holds_.clear();
}

void PlacementEngine::Evict() {
  for (auto it = classes_.begin(); it != classes_.end();) {
    auto& bucket = it->second;
    for (auto& c : bucket) {
      if (c->last_plan + kEvictAfterPlans < plan_seq_) {
        --c->st->refs;
        c.reset();
        --num_classes_;
      }
    }
    bucket.erase(std::remove(bucket.begin(), bucket.end(), nullptr), bucket.end());
    if (bucket.empty()) {
      classes_.erase(it++);
    } else {
      ++it;
    }
  }
  for (auto it = static_classes_.begin(); it != static_classes_.end();) {
    auto& bucket = it->second;
    bucket.erase(
        std::remove_if(bucket.begin(), bucket.end(), [](const auto& s) { return s->refs == 0; }),
        bucket.end());
    if (bucket.empty()) {
      static_classes_.erase(it++);
    } else {
      ++it;
    }
  }
}

Explanation PlacementEngine::Explain(const TaskContext& t, const StaticClass& st,
                                     const ClusterSnapshot& snap) const {
  struct Agg {
    size_t filter;
    Rejection r;
    int64_t hosts;
  };
  auto add = [](std::vector<Agg>& aggs, size_t fi, const Rejection& r) {
    for (Agg& a : aggs) {
      if (a.filter == fi && a.r.reason == r.reason) {
        ++a.hosts;
        a.r.available = std::max(a.r.available, r.available);
        return;
      }
    }
    aggs.push_back(Agg{fi, r, 1});
  };
  const auto& fs = profile_.filters();
  const size_t num_static = profile_.num_static_filters();
  std::vector<Agg> now;
  std::vector<Agg> ever;
  bool could_ever = false;
  Explanation e;
  e.hosts_considered = static_cast<int64_t>(snap.num_hosts());
  for (uint32_t slot = 0; slot < snap.slots(); ++slot) {
    if (!snap.present(slot)) continue;
    const HostState& h = snap.host_at(slot);
    bool rejected = false;
    // A host its class passes needs only the dynamic filters asked (the static ones come
    // first in the profile and read nothing of the task).
    const size_t first = slot < st.pass.size() && st.pass[slot] ? num_static : 0;
    for (size_t i = first; i < fs.size(); ++i) {
      if (std::optional<Rejection> r = fs[i]->Check(t, h)) {
        add(now, i, *r);
        rejected = true;
        break;
      }
    }
    if (!rejected) ++e.hosts_feasible;
    if (could_ever) continue;
    bool ever_rejected = false;
    for (size_t i = 0; i < fs.size(); ++i) {
      if (std::optional<Rejection> r = fs[i]->CheckEmpty(t, h)) {
        add(ever, i, *r);
        ever_rejected = true;
        break;
      }
    }
    could_ever = !ever_rejected;
  }
  auto render = [&](std::vector<Agg>& aggs) {
    std::stable_sort(aggs.begin(), aggs.end(), [](const Agg& a, const Agg& b) {
      return a.hosts != b.hosts ? a.hosts > b.hosts : a.filter < b.filter;
    });
    std::vector<RejectionCount> out;
    for (const Agg& a : aggs) {
      RejectionCount rc;
      rc.filter = std::string(fs[a.filter]->name());
      rc.reason = fs[a.filter]->Describe(t, a.r);
      rc.hosts = a.hosts;
      rc.dimension = a.r.dimension;
      rc.asked = a.r.asked;
      rc.best_available = a.r.available;
      out.push_back(std::move(rc));
    }
    return out;
  };
  e.rejections = render(now);
  e.never_fits = e.hosts_considered > 0 && !could_ever;
  if (e.never_fits) e.never_fits_reasons = render(ever);
  return e;
}

}  // namespace paceline::placement
