#include "scheduler/host_holds.h"

#include <algorithm>
#include <span>
#include <utility>

namespace paceline::scheduler {
namespace {

// How many tasks of `shape` fit in `free`, at most `cap`.
uint32_t Fitting(const Resources& free, const placement::TaskShape& shape, uint32_t cap) {
  uint32_t n = cap;
  for (Dim d : kAllDims) {
    const int64_t need = shape.resources[d];
    if (need <= 0) continue;
    if (free[d] < need) return 0;
    n = static_cast<uint32_t>(std::min<int64_t>(n, free[d] / need));
  }
  return n;
}

// At most this many members of one job on a host: the shape's smallest max_per_host.
uint32_t PerHostCap(const placement::TaskShape& shape, uint32_t members) {
  uint32_t cap = members;
  for (const MaxPerHostConstraint& c : shape.max_per_host) cap = std::min(cap, c.max_per_host);
  return cap;
}

}  // namespace

std::optional<HostHolds::Ask> HostHolds::AskOf(resmgr::GangId gang) {
  std::optional<resmgr::GangMembers> m = p_.rm.Members(gang);
  if (!m.has_value() || m->tasks.size() < 2) return std::nullopt;
  const jobmgr::Job* job = p_.jobs.GetJob(m->job);
  if (job == nullptr) return std::nullopt;
  const JobSpec& spec = job->spec();
  if (spec.type == JobType::kDaemon || spec.type == JobType::kStateful || spec.sla.revocable) {
    return std::nullopt;  // pinned to hosts, or placed on slack: not held for
  }
  absl::StatusOr<std::shared_ptr<const placement::TaskShape>> shape =
      p_.shapes.ShapeOf(*job, m->tasks.front().instance);
  if (!shape.ok()) return std::nullopt;  // placement says why
  const uint32_t members = static_cast<uint32_t>(m->tasks.size());
  return Ask{*shape, members, PerHostCap(**shape, members)};
}

bool HostHolds::FitsNow(resmgr::GangId gang, absl::Time) {
  std::optional<Ask> ask = AskOf(gang);
  if (!ask.has_value()) return true;
  const placement::ClusterSnapshot& snap = p_.snapshot;
  const uint64_t id = gang.value();
  auto fits = [&](const placement::HostState& h) {
    if (h.held_for() != 0) return 0u;
    const uint32_t k = Fitting(h.free(), *ask->shape, ask->cap);  // cheap: first
    return k > 0 && Eligible(id, *ask->shape, h) ? k : 0u;
  };
  // It failed before: only room on hosts relaxed since can make it fit.
  if (auto it = no_room_.find(id); it != no_room_.end()) {
    if (std::optional<std::span<const uint32_t>> relaxed = snap.RelaxedSince(it->second.seen)) {
      for (uint32_t slot : *relaxed) {
        if (snap.present(slot)) it->second.fit += fits(snap.host_at(slot));
      }
      it->second.seen = snap.relax_seq();
      if (it->second.fit < ask->members) return false;
    }
  }
  uint32_t fit = 0;
  for (uint32_t slot = 0; slot < snap.slots() && fit < ask->members; ++slot) {
    if (snap.present(slot)) fit += fits(snap.host_at(slot));
  }
  if (fit >= ask->members) {
    no_room_.erase(id);
    return true;
  }
  no_room_[id] = NoRoom{fit, snap.relax_seq()};
  return false;
}

std::optional<absl::Time> HostHolds::HostsFreeAt(resmgr::GangId gang, absl::Time now,
                                                 absl::Time fits_bounds) {
  const uint64_t id = gang.value();
  std::optional<Ask> ask = AskOf(gang);
  if (!ask.has_value()) return std::nullopt;
  const std::shared_ptr<const placement::TaskShape>& shape = ask->shape;
  const uint32_t members = ask->members;
  const uint32_t cap = ask->cap;

  if (auto it = holds_.find(id); it != holds_.end()) {
    Hold& hold = it->second;
    if (hold.hosts.empty() && now - hold.made < refresh_) {
      return std::nullopt;  // it had room, or its hosts never free: asked again later
    }
    if (!hold.hosts.empty() && now < hold.until && AllUp(hold)) {
      uint32_t fit = 0;
      for (HostId h : hold.hosts) fit += Fitting(p_.snapshot.host(h)->free(), *shape, cap);
      if (fit < members) fit += Grab(id, *shape, cap, hold);
      // Admitted: the hold stays until the placement pass has used it (Prune).
      return fit >= members ? std::nullopt : std::optional<absl::Time>(hold.until);
    }
  }
  std::optional<Hold> plan = Plan(id, *shape, members, now, std::max(now, fits_bounds));
  if (!plan.has_value() || plan->hosts.empty()) {
    Release(id);
    // Remembered for a while: a gang waiting for its pool's bounds is asked every cycle.
    holds_[id] = Hold{now, now, {}, 0};
    return std::nullopt;  // no hold: admitted, it waits for hosts as without holds
  }
  Hold& held = holds_[id];
  for (HostId h : held.hosts) {
    if (!std::binary_search(plan->hosts.begin(), plan->hosts.end(), h)) {
      p_.snapshot.ReleaseHostHold(h);
    }
  }
  for (HostId h : plan->hosts) {
    absl::Status s = p_.snapshot.HoldHost(h, id, plan->until);
    (void)s;  // every planned host is present
  }
  held = std::move(*plan);
  held.seen = p_.snapshot.relax_seq();  // what the holds above logged is not news
  return held.until;
}

uint32_t HostHolds::Grab(uint64_t gang, const placement::TaskShape& shape, uint32_t cap,
                         Hold& hold) {
  placement::ClusterSnapshot& snap = p_.snapshot;
  uint32_t got = 0;
  auto consider = [&](uint32_t slot) {
    if (!snap.present(slot)) return;
    const placement::HostState& h = snap.host_at(slot);
    if (h.held_for() != 0) return;
    const uint32_t k = Fitting(h.free(), shape, cap);
    if (k == 0 || !Eligible(gang, shape, h)) return;
    absl::Status s = snap.HoldHost(HostId(slot), gang, hold.until);
    (void)s;  // present
    hold.hosts.push_back(HostId(slot));
    got += k;
  };
  if (std::optional<std::span<const uint32_t>> relaxed = snap.RelaxedSince(hold.seen)) {
    for (uint32_t slot : *relaxed) consider(slot);
  } else {
    for (uint32_t slot = 0; slot < snap.slots(); ++slot) consider(slot);
  }
  hold.seen = snap.relax_seq();
  if (got > 0) std::sort(hold.hosts.begin(), hold.hosts.end());
  return got;
}

bool HostHolds::AllUp(const Hold& hold) const {
  for (HostId h : hold.hosts) {
    const placement::HostState* host = p_.snapshot.host(h);
    if (host == nullptr || host->status() != placement::HostStatus::kUp) return false;
  }
  return true;
}

bool HostHolds::Eligible(uint64_t gang, const placement::TaskShape& shape,
                         const placement::HostState& h) const {
  return h.status() == placement::HostStatus::kUp && (h.held_for() == 0 || h.held_for() == gang) &&
         shape.resources.FitsIn(h.capacity()) && p_.engine.PassesStaticFilters(shape, h);
}

std::optional<HostHolds::Hold> HostHolds::Plan(uint64_t gang, const placement::TaskShape& shape,
                                               uint32_t members, absl::Time now,
                                               absl::Time by) const {
  struct Event {
    absl::Time at;
    uint32_t slot;
    uint32_t more;  // members that fit from `at` on, beyond those of the host's earlier events
  };
  const uint32_t cap = PerHostCap(shape, members);
  std::vector<Event> events;
  std::vector<uint32_t> later;  // hosts that give room as their tasks end
  uint32_t fit_now = 0;
  const placement::ClusterSnapshot& snap = p_.snapshot;
  for (uint32_t slot = 0; slot < snap.slots(); ++slot) {
    if (!snap.present(slot)) continue;
    const placement::HostState& h = snap.host_at(slot);
    if (!Eligible(gang, shape, h)) continue;
    const uint32_t k = Fitting(h.free(), shape, cap);
    if (k > 0) {
      events.push_back(Event{now, slot, k});
      fit_now += k;
      if (fit_now >= members) return Hold{now, now, {}};
    }
    if (k < cap) later.push_back(slot);
  }
  // Room for every member by `by`: no hold (a count, without sorting anything).
  if (by > now) {
    uint32_t fit_by = fit_now;
    for (uint32_t slot : later) {
      const placement::HostState& h = snap.host_at(slot);
      Resources free = h.free();
      for (const TaskId& t : h.tasks()) {
        const placement::Usage* u = snap.TaskUsage(t);
        if (u != nullptr && !u->revocable && EndBound(t, now) <= by) free += u->resources;
      }
      fit_by += Fitting(free, shape, cap) - Fitting(h.free(), shape, cap);
      if (fit_by >= members) return Hold{by, now, {}};
    }
  }
  std::vector<std::pair<absl::Time, Resources>> ends;
  for (uint32_t slot : later) {
    const placement::HostState& h = snap.host_at(slot);
    ends.clear();
    for (const TaskId& t : h.tasks()) {
      const placement::Usage* u = snap.TaskUsage(t);
      if (u == nullptr || u->revocable) continue;  // revocable work gives way to regular work
      ends.emplace_back(EndBound(t, now), u->resources);
    }
    std::sort(ends.begin(), ends.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    Resources free = h.free();
    uint32_t had = Fitting(free, shape, cap);
    for (size_t i = 0; i < ends.size() && had < cap;) {
      const absl::Time at = ends[i].first;
      if (at == absl::InfiniteFuture()) break;
      for (; i < ends.size() && ends[i].first == at; ++i) free += ends[i].second;
      const uint32_t k = Fitting(free, shape, cap);
      if (k > had) events.push_back(Event{std::max(at, now), slot, k - had});
      had = k;
    }
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.slot < b.slot;
  });
  Hold hold;
  hold.made = now;
  hold.seen = snap.relax_seq();
  uint32_t got = 0;
  for (const Event& e : events) {
    hold.hosts.push_back(HostId(e.slot));
    hold.until = e.at;
    got += e.more;
    if (got >= members) break;
  }
  if (got < members) return std::nullopt;
  if (hold.until <= by) return Hold{by, now, {}};  // rounding aside, the count above
  std::sort(hold.hosts.begin(), hold.hosts.end());
  hold.hosts.erase(std::unique(hold.hosts.begin(), hold.hosts.end()), hold.hosts.end());
  return hold;
}

absl::Time HostHolds::EndBound(TaskId t, absl::Time now) const {
  const jobmgr::Job* job = p_.jobs.GetJob(t.job);
  if (job == nullptr || t.instance >= job->instances()) return now;
  const jobmgr::TaskRuntime& run = job->task(t.instance);
  if (run.state == TaskState::kKilling || run.state == TaskState::kPreempting) return now;
  const absl::Duration limit = job->spec().sla.max_running_time;
  if (limit <= absl::ZeroDuration()) return absl::InfiniteFuture();
  if (run.state == TaskState::kRunning) return std::max(absl::Time(run.started_at) + limit, now);
  return now + limit;  // placed or launching: its deadline starts when it runs
}

void HostHolds::Release(uint64_t gang) {
  auto it = holds_.find(gang);
  if (it == holds_.end()) return;
  for (HostId h : it->second.hosts) {
    if (const placement::HostState* host = p_.snapshot.host(h);
        host != nullptr && host->held_for() == gang) {
      p_.snapshot.ReleaseHostHold(h);
    }
  }
  holds_.erase(it);
}

bool HostHolds::Queued(uint64_t gang) const {
  absl::StatusOr<resmgr::GangView> v = p_.rm.DescribeGang(resmgr::GangId(gang));
  return v.ok() && v->state == resmgr::GangState::kQueued;
}

void HostHolds::Prune() {
  std::vector<uint64_t> gone;
  for (const auto& [gang, hold] : holds_) {
    if (!Queued(gang)) gone.push_back(gang);
  }
  for (uint64_t gang : gone) Release(gang);
  absl::erase_if(no_room_, [&](const auto& e) { return !Queued(e.first); });
}

}  // namespace paceline::scheduler
