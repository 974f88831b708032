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

// One-task gangs of one shape are counted per host up to this many (and max_per_host).
constexpr uint32_t kManyPerHost = 1u << 16;

// At most this many members of one job on a host: the shape's smallest max_per_host.
uint32_t PerHostCap(const placement::TaskShape& shape, uint32_t members) {
  uint32_t cap = members;
  for (const MaxPerHostConstraint& c : shape.max_per_host) cap = std::min(cap, c.max_per_host);
  return cap;
}

}  // namespace

std::optional<HostHolds::Ask> HostHolds::AskOf(resmgr::GangId gang) {
  if (auto it = asks_.find(gang.value()); it != asks_.end()) return it->second;
  std::optional<Ask> ask = MakeAsk(gang);
  asks_[gang.value()] = ask;
  return ask;
}

std::optional<HostHolds::Ask> HostHolds::MakeAsk(resmgr::GangId gang) const {
  std::optional<resmgr::GangMembers> m = p_.rm.Members(gang);
  if (!m.has_value() || m->tasks.empty()) return std::nullopt;
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
  return Ask{*shape, members, PerHostCap(**shape, members), m->job};
}

bool HostHolds::FitsNow(resmgr::GangId gang, absl::Time now) {
  std::optional<Ask> ask = AskOf(gang);
  if (!ask.has_value()) return true;
  const placement::ClusterSnapshot& snap = p_.snapshot;
  const uint64_t id = gang.value();
  auto ends_by = [&] {
    const jobmgr::Job* job = p_.jobs.GetJob(ask->job);
    return job != nullptr ? jobmgr::DeadlineFrom(*job, now) : absl::InfiniteFuture();
  };
  if (ask->members == 1) return OneFitsNow(*ask, ends_by());
  auto fits = [&](uint32_t slot) {
    const placement::HostState& h = snap.host_at(slot);
    if (h.held_for() != 0) return 0u;
    return Fitting(h.free(), *ask->shape, ask->cap);
  };
  const std::vector<uint8_t>& pass = PassOf(ask->shape);
  // What hosts held for other gangs lack: those held until it ends count (placement lets a
  // task that ends by a hold's time use its hosts).
  auto short_of = [&](uint32_t fit) {
    if (fit >= ask->members) return false;
    return fit + HeldRoom(id, *ask, pass, ends_by(), ask->members - fit) < ask->members;
  };
  // It failed before: only room on hosts relaxed since can make it fit.
  if (auto it = no_room_.find(id); it != no_room_.end()) {
    if (std::optional<std::span<const uint32_t>> relaxed = snap.RelaxedSince(it->second.seen)) {
      for (uint32_t slot : *relaxed) {
        if (Eligible(id, pass, slot)) it->second.fit += fits(slot);
      }
      it->second.seen = snap.relax_seq();
      if (short_of(it->second.fit)) return false;
    }
  }
  uint32_t fit = 0;
  for (uint32_t slot = 0; slot < snap.slots() && fit < ask->members; ++slot) {
    if (Eligible(id, pass, slot)) fit += fits(slot);
  }
  if (!short_of(fit)) {
    no_room_.erase(id);
    return true;
  }
  no_room_[id] = NoRoom{fit, snap.relax_seq()};
  return false;
}

bool HostHolds::OneFitsNow(const Ask& ask, absl::Time ends_by) {
  // Within a pass, room is only handed out: a shape that had none still has none for a task
  // that ends no earlier (the walk behind a reservation meets a job's tasks in a row).
  if (last_no_.round == rounds_ && last_no_.shape == ask.shape && ends_by >= last_no_.ends_by) {
    return false;
  }
  const std::vector<uint8_t>& pass = PassOf(ask.shape);
  Room& room = RoomOf(ask.shape, pass);
  if (room.round != rounds_) {
    room.round = rounds_;
    room.next = 0;
    room.left = 0;
  }
  while (room.left == 0 && room.next < room.slots.size()) {
    const uint32_t slot = room.slots[room.next];
    room.left = FreeRoom(*ask.shape, pass, slot);
    if (room.left > 0) {
      ++room.next;
      break;
    }
    room.listed[slot] = 0;  // full now: dropped until the relaxed log names it again
    room.slots[room.next] = room.slots.back();
    room.slots.pop_back();
  }
  if (room.left > 0) {
    --room.left;
    return true;
  }
  if (room.held_round != rounds_) {  // the latest hold whose hosts have room for one
    room.held_round = rounds_;
    room.held_until = absl::InfinitePast();
    for (const auto& [gang, hold] : holds_) {
      if (hold.until > room.held_until && RoomOnHold(hold, *ask.shape, 1, pass, 1) > 0) {
        room.held_until = hold.until;
      }
    }
  }
  if (ends_by <= room.held_until) return true;
  last_no_ = LastNo{rounds_, ask.shape, ends_by};
  return false;
}

HostHolds::Room& HostHolds::RoomOf(const std::shared_ptr<const placement::TaskShape>& shape,
                                   const std::vector<uint8_t>& pass) {
  const placement::ClusterSnapshot& snap = p_.snapshot;
  const uint64_t key = shape->fit_signature;
  if (rooms_.size() >= kMaxPasses && !rooms_.contains(key)) rooms_.clear();
  Room& room = rooms_[key];
  std::optional<std::span<const uint32_t>> relaxed;
  if (room.fit.Matches(shape) && room.listed.size() == snap.slots()) {
    if (room.seen == snap.relax_seq()) return room;
    relaxed = snap.RelaxedSince(room.seen);
  }
  auto look = [&](uint32_t slot) {
    if (!room.listed[slot] && FreeRoom(*shape, pass, slot) > 0) {
      room.listed[slot] = 1;
      room.slots.push_back(slot);
    }
  };
  if (relaxed.has_value()) {
    for (uint32_t slot : *relaxed) look(slot);
  } else {  // new, a hash collision, or the log was cut: every host is looked at
    room = Room{FitOf{shape, shape}};
    room.listed.assign(snap.slots(), 0);
    for (uint32_t slot = 0; slot < snap.slots(); ++slot) look(slot);
  }
  room.seen = snap.relax_seq();
  return room;
}

uint32_t HostHolds::FreeRoom(const placement::TaskShape& shape, const std::vector<uint8_t>& pass,
                             uint32_t slot) const {
  if (slot >= pass.size() || !pass[slot]) return 0;
  const placement::HostState& h = p_.snapshot.host_at(slot);
  if (h.held_for() != 0) return 0;
  return Fitting(h.free(), shape, PerHostCap(shape, kManyPerHost));
}

uint32_t HostHolds::HeldRoom(uint64_t gang, const Ask& ask, const std::vector<uint8_t>& pass,
                             absl::Time ends_by, uint32_t enough) const {
  uint32_t room = 0;
  for (const auto& [other, hold] : holds_) {
    if (room >= enough) break;
    if (other == gang || hold.until < ends_by) continue;
    room += RoomOnHold(hold, *ask.shape, ask.cap, pass, enough - room);
  }
  return room;
}

uint32_t HostHolds::RoomOnHold(const Hold& hold, const placement::TaskShape& shape, uint32_t cap,
                               const std::vector<uint8_t>& pass, uint32_t enough) const {
  uint32_t room = 0;
  for (HostId h : hold.hosts) {
    if (room >= enough) break;
    const placement::HostState* host = p_.snapshot.host(h);
    if (host != nullptr && h.value() < pass.size() && pass[h.value()]) {
      room += Fitting(host->free(), shape, cap);
    }
  }
  return room;
}

std::optional<absl::Time> HostHolds::HostsFreeAt(resmgr::GangId gang, absl::Time now,
                                                 absl::Time fits_bounds) {
  const uint64_t id = gang.value();
  std::optional<Ask> ask = AskOf(gang);
  if (!ask.has_value() || ask->members < 2) return std::nullopt;
  const placement::TaskShape& shape = *ask->shape;
  const uint32_t members = ask->members;
  const uint32_t cap = ask->cap;

  if (auto it = holds_.find(id); it != holds_.end()) {
    Hold& hold = it->second;
    if (hold.hosts.empty() && now - hold.made < KeepNoHold(hold, now, fits_bounds)) {
      return std::nullopt;  // it had room, or its hosts never free: asked again later
    }
    if (!hold.hosts.empty() && now < hold.until && AllUp(hold)) {
      uint32_t fit = 0;
      for (HostId h : hold.hosts) fit += Fitting(p_.snapshot.host(h)->free(), shape, cap);
      if (fit < members) fit += Grab(id, *ask, members - fit, hold);
      if (fit < members) return hold.until;
      // Admitted: the hold keeps the hosts that give its members room until the placement
      // pass has used them (Prune); the rest are free for the gangs after it in this pass.
      KeepRoom(id, *ask, hold);
      return std::nullopt;
    }
  }
  std::optional<Hold> plan = Plan(id, *ask, now, std::max(now, fits_bounds));
  if (!plan.has_value() || plan->hosts.empty()) {
    Release(id);
    // Remembered for a while (KeepNoHold): a gang waiting for its pool's bounds is asked every
    // cycle. `until` is when the hosts have room by (now when they never do).
    holds_[id] = Hold{plan.has_value() ? plan->until : now, now, {}, 0};
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

uint32_t HostHolds::Grab(uint64_t gang, const Ask& ask, uint32_t lacks, Hold& hold) {
  placement::ClusterSnapshot& snap = p_.snapshot;
  const std::vector<uint8_t>& pass = PassOf(ask.shape);
  uint32_t got = 0;
  auto consider = [&](uint32_t slot) {
    if (got >= lacks) return;
    if (!Eligible(gang, pass, slot) || snap.host_at(slot).held_for() != 0) return;
    const uint32_t k = Fitting(snap.host_at(slot).free(), *ask.shape, ask.cap);
    if (k == 0) return;
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

void HostHolds::KeepRoom(uint64_t gang, const Ask& ask, Hold& hold) {
  uint32_t fit = 0;
  size_t kept = 0;
  for (HostId h : hold.hosts) {
    const placement::HostState* host = p_.snapshot.host(h);
    const uint32_t k =
        host != nullptr && fit < ask.members ? Fitting(host->free(), *ask.shape, ask.cap) : 0;
    if (k > 0) {
      fit += k;
      hold.hosts[kept++] = h;
    } else if (host != nullptr && host->held_for() == gang) {
      p_.snapshot.ReleaseHostHold(h);
    }
  }
  hold.hosts.resize(kept);
}

absl::Duration HostHolds::KeepNoHold(const Hold& hold, absl::Time now,
                                     absl::Time fits_bounds) const {
  if (fits_bounds <= now) return refresh_;  // about to be admitted: a fresh answer
  return std::max(refresh_, (hold.until - hold.made) / 2);
}

bool HostHolds::AllUp(const Hold& hold) const {
  for (HostId h : hold.hosts) {
    const placement::HostState* host = p_.snapshot.host(h);
    if (host == nullptr || host->status() != placement::HostStatus::kUp) return false;
  }
  return true;
}

const std::vector<uint8_t>& HostHolds::PassOf(
    const std::shared_ptr<const placement::TaskShape>& shape) {
  const placement::ClusterSnapshot& snap = p_.snapshot;
  const uint64_t key = shape->fit_signature;
  if (pass_.size() >= kMaxPasses && !pass_.contains(key)) pass_.clear();
  StaticPass& e = pass_[key];
  if (!e.fit.Matches(shape)) e.fit = FitOf();  // a hash collision: worked out again
  auto passes = [&](uint32_t slot) -> uint8_t {
    if (!snap.present(slot)) return 0;
    const placement::HostState& h = snap.host_at(slot);
    return h.status() == placement::HostStatus::kUp && shape->resources.FitsIn(h.capacity()) &&
           p_.engine.PassesStaticFilters(*shape, h);
  };
  std::optional<std::span<const uint32_t>> changes;
  if (e.fit.shape != nullptr && e.seq == snap.static_seq()) return e.pass;
  if (e.fit.shape != nullptr) changes = snap.StaticChangesSince(e.seq);
  if (changes.has_value() && e.pass.size() == snap.slots()) {
    for (uint32_t slot : *changes) e.pass[slot] = passes(slot);
  } else {
    e.fit = FitOf{shape, shape};
    e.pass.resize(snap.slots());
    for (uint32_t slot = 0; slot < snap.slots(); ++slot) e.pass[slot] = passes(slot);
  }
  e.seq = snap.static_seq();
  return e.pass;
}

bool HostHolds::FitOf::Matches(const std::shared_ptr<const placement::TaskShape>& s) {
  if (shape == nullptr) return false;
  if (s == shape || s == last) return true;
  if (shape->resources != s->resources || !shape->StaticEquals(*s)) return false;
  last = s;
  return true;
}

bool HostHolds::Eligible(uint64_t gang, const std::vector<uint8_t>& pass, uint32_t slot) const {
  if (slot >= pass.size() || !pass[slot]) return false;
  const uint64_t held = p_.snapshot.host_at(slot).held_for();
  return held == 0 || held == gang;
}

std::optional<HostHolds::Hold> HostHolds::Plan(uint64_t gang, const Ask& ask, absl::Time now,
                                               absl::Time by) {
  struct Event {
    absl::Time at;
    uint32_t slot;
    uint32_t more;  // members that fit from `at` on, beyond those of the host's earlier events
  };
  const placement::TaskShape& shape = *ask.shape;
  const uint32_t members = ask.members;
  const uint32_t cap = ask.cap;
  const std::vector<uint8_t>& pass = PassOf(ask.shape);
  std::vector<Event> events;
  std::vector<uint32_t> later;  // hosts that give room as their tasks end
  uint32_t fit_now = 0;
  const placement::ClusterSnapshot& snap = p_.snapshot;
  for (uint32_t slot = 0; slot < snap.slots(); ++slot) {
    if (!Eligible(gang, pass, slot)) continue;
    const uint32_t k = Fitting(snap.host_at(slot).free(), shape, cap);
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
      const Resources& free_now = snap.host_at(slot).free();
      Resources free = free_now;
      for (const End& e : EndsOf(slot, now)) {
        if (e.at > by) break;
        free += e.resources;
      }
      fit_by += Fitting(free, shape, cap) - Fitting(free_now, shape, cap);
      if (fit_by >= members) return Hold{by, now, {}};
    }
  }
  for (uint32_t slot : later) {
    std::span<const End> ends = EndsOf(slot, now);
    Resources free = snap.host_at(slot).free();
    uint32_t had = Fitting(free, shape, cap);
    for (size_t i = 0; i < ends.size() && had < cap;) {
      const absl::Time at = ends[i].at;
      if (at == absl::InfiniteFuture()) break;
      for (; i < ends.size() && ends[i].at == at; ++i) free += ends[i].resources;
      const uint32_t k = Fitting(free, shape, cap);
      if (k > had) events.push_back(Event{at, slot, k - had});
      had = k;
    }
  }
  // Every event gives at least one member: the first `members` events in time suffice.
  auto sooner = [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.slot < b.slot;
  };
  if (events.size() > members) {
    std::nth_element(events.begin(), events.begin() + members, events.end(), sooner);
    events.resize(members);
  }
  std::sort(events.begin(), events.end(), sooner);
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

std::span<const HostHolds::End> HostHolds::EndsOf(uint32_t slot, absl::Time now) {
  const placement::ClusterSnapshot& snap = p_.snapshot;
  const placement::HostState& h = snap.host_at(slot);
  if (host_ends_.size() < snap.slots()) host_ends_.resize(snap.slots());
  HostEnds& he = host_ends_[slot];
  if (he.version != h.version()) {
    he.settled.clear();
    he.unsettled.clear();
    for (const TaskId& t : h.tasks()) {
      const placement::Usage* u = snap.TaskUsage(t);
      if (u == nullptr || u->revocable) continue;  // revocable work gives way to regular work
      const Bound b = EndBound(t, now);
      if (b.settled) {
        he.settled.push_back(End{b.at, u->resources});
      } else {
        he.unsettled.emplace_back(t, u->resources);
      }
    }
    std::sort(he.settled.begin(), he.settled.end(),
              [](const End& a, const End& b) { return a.at < b.at; });
    he.version = h.version();
  }
  ends_.clear();
  for (const End& e : he.settled) ends_.push_back(End{std::max(e.at, now), e.resources});
  if (!he.unsettled.empty()) {
    for (const auto& [t, r] : he.unsettled) ends_.push_back(End{EndBound(t, now).at, r});
    std::sort(ends_.begin(), ends_.end(), [](const End& a, const End& b) { return a.at < b.at; });
  }
  return ends_;
}

HostHolds::Bound HostHolds::EndBound(TaskId t, absl::Time now) const {
  const jobmgr::Job* job = p_.jobs.GetJob(t.job);
  if (job == nullptr || t.instance >= job->instances()) return {now};
  const jobmgr::TaskRuntime& run = job->task(t.instance);
  if (run.state == TaskState::kKilling || run.state == TaskState::kPreempting) return {now};
  if (run.state == TaskState::kRunning) {
    return {jobmgr::DeadlineFrom(*job, absl::Time(run.started_at)), true};
  }
  // Placed or launching: its deadline starts when it runs (settled only without a limit).
  const absl::Time at = jobmgr::DeadlineFrom(*job, now);
  return {at, at == absl::InfiniteFuture()};
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

uint32_t HostHolds::Rejecting(absl::Time ends_by) const {
  uint32_t n = 0;
  for (const auto& [gang, hold] : holds_) n += !hold.hosts.empty() && hold.until < ends_by;
  return n;
}

bool HostHolds::Queued(uint64_t gang) const {
  return p_.rm.StateOf(resmgr::GangId(gang)) == resmgr::GangState::kQueued;
}

void HostHolds::Prune() {
  ++rounds_;
  std::vector<uint64_t> gone;
  for (const auto& [gang, hold] : holds_) {
    if (!Queued(gang)) gone.push_back(gang);
  }
  for (uint64_t gang : gone) Release(gang);
  // What is kept of gangs gone is only stale (gang ids are not reused): dropped once the maps
  // have doubled since, so that a cycle does not look up every gang asked about.
  if (asks_.size() + no_room_.size() >= 2 * kept_ + 64) {
    absl::erase_if(no_room_, [&](const auto& e) { return !Queued(e.first); });
    absl::erase_if(asks_, [&](const auto& e) { return !Queued(e.first); });
    kept_ = asks_.size() + no_room_.size();
  }
}

}  // namespace paceline::scheduler
