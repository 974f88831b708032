#include "resmgr/rm_state.h"

#include <algorithm>

#include "common/check.h"

namespace paceline::resmgr {

Earmark* PoolRuntime::FindEarmark(GangId beneficiary) {
  for (Earmark& e : earmarks) {
    if (e.beneficiary == beneficiary) return &e;
  }
  return nullptr;
}

std::optional<uint32_t> RmState::FindGang(GangId id) const {
  auto it = gang_index_.find(id);
  if (it == gang_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<RmState::TaskRef> RmState::FindTask(const TaskId& id) const {
  auto it = task_index_.find(id);
  if (it == task_index_.end()) return std::nullopt;
  return it->second;
}

PoolRuntime& RmState::pool(PoolId id) {
  if (id.value() >= pools_.size()) pools_.resize(id.value() + 1);
  return pools_[id.value()];
}

const PoolRuntime* RmState::FindPool(PoolId id) const {
  return id.value() < pools_.size() ? &pools_[id.value()] : nullptr;
}

void RmState::ResetPool(PoolId id) {
  if (id.value() >= pools_.size()) return;
  PL_CHECK(!pools_[id.value()].HasWork()) << "resetting pool " << id.value() << " with work";
  pools_[id.value()] = PoolRuntime();
}

const JobCounts* RmState::job(JobId id) const {
  auto it = job_index_.find(id);
  return it == job_index_.end() ? nullptr : &job_slots_[it->second];
}

VictimKey RmState::KeyOf(uint32_t slot) const {
  const Gang& g = gangs_[slot];
  return VictimKey{g.running, g.priority, g.victim_time(), g.seq, slot};
}

void RmState::IndexEnds(uint32_t slot, bool insert) {
  const Gang& g = gangs_[slot];
  if (g.limit_ns <= 0 && g.estimate_ns <= 0) return;
  PoolRuntime& p = pool(g.pool);
  const auto key = [&](bool expected) {
    return EndKey{absl::ToUnixNanos(g.EndBound(expected)), slot};
  };
  const EndEntry entry{g.held, g.sla, g.controller};
  if (g.limit_ns > 0) {
    if (insert) {
      p.ends.insert_or_assign(key(false), entry);
    } else {
      p.ends.erase(key(false));
    }
  }
  if (insert) {
    p.expected_ends.insert_or_assign(key(true), entry);
  } else {
    p.expected_ends.erase(key(true));
  }
  if (g.estimate_ns > 0) {
    if (insert) {
      ++p.estimated;
    } else {
      --p.estimated;
    }
  }
}

void RmState::UpdateEnds(uint32_t slot) {
  const Gang& g = gangs_[slot];
  if (g.limit_ns <= 0 && g.estimate_ns <= 0) return;
  PoolRuntime& p = pool(g.pool);
  for (bool expected : {false, true}) {
    EndIndex& index = expected ? p.expected_ends : p.ends;
    auto it = index.find(EndKey{absl::ToUnixNanos(g.EndBound(expected)), slot});
    if (it != index.end()) it->second.held = g.held;
  }
}

void RmState::InsertVictim(uint32_t slot) {
  Gang& g = gangs_[slot];
  PoolRuntime& p = pool(g.pool);
  const int l = static_cast<int>(g.ledger());
  g.candidate_index = static_cast<uint32_t>(p.candidates[l].size());
  p.candidates[l].push_back(slot);
  PriorityBucket& b = p.victim_sum_by_priority[l][g.priority];
  b.held += g.held;
  ++b.gangs;
}

void RmState::EraseVictim(uint32_t slot) {
  const Gang& g = gangs_[slot];
  PoolRuntime& p = pool(g.pool);
  const int l = static_cast<int>(g.ledger());
  std::vector<uint32_t>& c = p.candidates[l];
  PL_CHECK(g.candidate_index < c.size() && c[g.candidate_index] == slot)
      << "victim index out of sync for gang " << g.id.value();
  gangs_[c.back()].candidate_index = g.candidate_index;
  c[g.candidate_index] = c.back();
  c.pop_back();
  auto it = p.victim_sum_by_priority[l].find(g.priority);
  PL_CHECK(it != p.victim_sum_by_priority[l].end()) << "priority bucket missing";
  it->second.held -= g.held;
  if (--it->second.gangs == 0) p.victim_sum_by_priority[l].erase(it);
}

uint32_t RmState::Add(const GangRequest& r, uint64_t seq, absl::Time now,
                      std::optional<absl::Time> running_since) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(gangs_.size());
    gangs_.emplace_back();
  }
  Gang& g = gangs_[slot];
  g.id = r.id;
  g.job = r.job;
  g.pool = r.pool;
  g.priority = r.priority;
  g.sla = r.sla;
  g.controller = r.controller;
  g.state = GangState::kQueued;
  g.seq = seq;
  g.enqueued = now;
  g.admitted = absl::InfinitePast();
  g.tasks.clear();
  g.held = Resources();
  for (uint32_t i = 0; i < r.tasks.size(); ++i) {
    g.tasks.push_back(TaskRecord{r.tasks[i].id, r.tasks[i].resources});
    g.held += r.tasks[i].resources;
    task_index_.emplace(r.tasks[i].id, TaskRef{slot, i});
  }
  g.live = static_cast<uint32_t>(r.tasks.size());
  g.running = false;
  g.last_start = absl::InfinitePast();
  g.reason = WaitReason();
  g.has_preempted_for = false;
  g.limit_ns = std::max<int64_t>(0, absl::ToInt64Nanoseconds(r.max_running_time));
  g.estimate_ns = std::max<int64_t>(0, absl::ToInt64Nanoseconds(r.expected_running_time));
  gang_index_.emplace(r.id, slot);

  auto [it, inserted] = job_index_.try_emplace(r.job, 0);
  if (inserted) {
    if (!free_job_slots_.empty()) {
      it->second = free_job_slots_.back();
      free_job_slots_.pop_back();
      job_slots_[it->second] = JobCounts();
    } else {
      it->second = static_cast<uint32_t>(job_slots_.size());
      job_slots_.emplace_back();
    }
  }
  g.job_slot = it->second;
  JobCounts& j = job_slots_[g.job_slot];
  ++j.gangs;
  j.max_running = r.max_running_instances;

  PoolRuntime& p = pool(r.pool);
  const int l = static_cast<int>(g.ledger());
  p.queued[l] += g.held;
  if (running_since.has_value()) {
    FinishAdmit(slot, *running_since);
    for (uint32_t i = 0; i < g.tasks.size(); ++i) MarkRunning(TaskRef{slot, i}, *running_since);
  } else {
    p.queue[l].Push(QueueEntry{g.priority, g.seq, slot, static_cast<uint8_t>(g.lane())});
  }
  return slot;
}

void RmState::Reserve(size_t tasks) {
  gang_index_.reserve(tasks);
  task_index_.reserve(tasks);
}

AdmissionQueue::const_iterator RmState::AdmitAt(PoolId pool_id, Ledger l,
                                                AdmissionQueue::const_iterator it, absl::Time now) {
  const uint32_t slot = it->slot;
  PL_CHECK(gangs_[slot].state == GangState::kQueued && gangs_[slot].pool == pool_id)
      << "queue entry out of sync";
  auto next = pool(pool_id).queue[static_cast<int>(l)].Erase(it);
  FinishAdmit(slot, now);
  return next;
}

void RmState::FinishAdmit(uint32_t slot, absl::Time now) {
  Gang& g = gangs_[slot];
  PoolRuntime& p = pool(g.pool);
  const int l = static_cast<int>(g.ledger());
  p.queued[l] -= g.held;
  g.state = GangState::kAdmitted;
  g.admitted = now;
  for (TaskRecord& t : g.tasks) t.state = TaskState::kAdmitted;
  p.alloc.Apply(g.sla, g.controller, g.held, +1);
  total_.Apply(g.sla, g.controller, g.held, +1);
  ++p.admitted_gangs;
  job_slots_[g.job_slot].admitted += g.live;
  if (IsCandidate(g)) InsertVictim(slot);
  IndexEnds(slot, true);
  if (!p.earmarks.empty()) DropEarmark(g.pool, g.id);
}

void RmState::MarkRunning(const TaskRef& ref, absl::Time now) {
  Gang& g = gangs_[ref.slot];
  TaskRecord& t = g.tasks[ref.index];
  PL_CHECK(t.state == TaskState::kAdmitted) << "task " << t.id.ToString() << " not admitted";
  IndexEnds(ref.slot, false);
  t.state = TaskState::kRunning;
  t.started = now;
  g.running = true;
  g.last_start = std::max<absl::Time>(g.last_start, now);
  IndexEnds(ref.slot, true);
}

void RmState::ReleaseTask(const TaskRef& ref) {
  Gang& g = gangs_[ref.slot];
  TaskRecord& t = g.tasks[ref.index];
  PL_CHECK(t.state == TaskState::kAdmitted || t.state == TaskState::kRunning)
      << "releasing task " << t.id.ToString() << " that holds nothing";
  PoolRuntime& p = pool(g.pool);
  const bool candidate = IsCandidate(g);
  if (candidate) EraseVictim(ref.slot);
  p.alloc.Apply(g.sla, g.controller, t.resources, -1);
  total_.Apply(g.sla, g.controller, t.resources, -1);
  if (g.state == GangState::kPreempting) {
    if (g.ledger() == Ledger::kRegular) {
      p.alloc.preempting_regular -= t.resources;
      total_.preempting_regular -= t.resources;
    } else {
      p.alloc.preempting_revocable -= t.resources;
      total_.preempting_revocable -= t.resources;
    }
    if (g.has_preempted_for) {
      if (Earmark* e = p.FindEarmark(g.preempted_for)) {
        e->pending = SubtractClamped(e->pending, t.resources);
      }
    }
  }
  g.held -= t.resources;
  t.state = TaskState::kReleased;
  --g.live;
  --job_slots_[g.job_slot].admitted;
  task_index_.erase(t.id);
  if (g.live == 0) {
    --p.admitted_gangs;
    IndexEnds(ref.slot, false);
    Remove(ref.slot);
    return;
  }
  UpdateEnds(ref.slot);
  if (candidate) InsertVictim(ref.slot);
}

void RmState::BeginPreemption(uint32_t slot, std::optional<GangId> for_gang) {
  Gang& g = gangs_[slot];
  PL_CHECK(IsCandidate(g)) << "gang " << g.id.value() << " cannot be preempted";
  PoolRuntime& p = pool(g.pool);
  EraseVictim(slot);
  g.state = GangState::kPreempting;
  if (g.ledger() == Ledger::kRegular) {
    p.alloc.preempting_regular += g.held;
    total_.preempting_regular += g.held;
  } else {
    p.alloc.preempting_revocable += g.held;
    total_.preempting_revocable += g.held;
  }
  g.has_preempted_for = for_gang.has_value();
  if (for_gang.has_value()) {
    g.preempted_for = *for_gang;
    if (Earmark* e = p.FindEarmark(*for_gang)) e->pending += g.held;
  }
}

void RmState::Cancel(uint32_t slot) {
  Gang& g = gangs_[slot];
  const PoolId pool_id = g.pool;
  DropEarmark(pool_id, g.id);
  if (g.state == GangState::kQueued) {
    PoolRuntime& p = pool(pool_id);
    const int l = static_cast<int>(g.ledger());
    p.queue[l].Erase(QueueEntry{g.priority, g.seq, slot, static_cast<uint8_t>(g.lane())});
    p.queued[l] -= g.held;
    for (const TaskRecord& t : g.tasks) task_index_.erase(t.id);
    Remove(slot);
    return;
  }
  // Release what is still held; the last release removes the record.
  const GangId id = g.id;
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const TaskState s = gangs_[slot].tasks[i].state;
    if (s == TaskState::kAdmitted || s == TaskState::kRunning) {
      ReleaseTask(TaskRef{slot, i});
      if (!gang_index_.contains(id)) return;
    }
  }
}

void RmState::AddEarmark(PoolId pool_id, const Earmark& earmark) {
  PoolRuntime& p = pool(pool_id);
  PL_CHECK(p.FindEarmark(earmark.beneficiary) == nullptr) << "earmark exists";
  p.earmarks.push_back(earmark);
}

void RmState::DropEarmark(PoolId pool_id, GangId beneficiary) {
  PoolRuntime& p = pool(pool_id);
  auto it = std::find_if(p.earmarks.begin(), p.earmarks.end(),
                         [&](const Earmark& e) { return e.beneficiary == beneficiary; });
  if (it != p.earmarks.end()) p.earmarks.erase(it);
}

void RmState::Remove(uint32_t slot) {
  Gang& g = gangs_[slot];
  gang_index_.erase(g.id);
  JobCounts& j = job_slots_[g.job_slot];
  if (--j.gangs == 0) {
    PL_CHECK(j.admitted == 0) << "job " << g.job.value() << " holds tasks of no gang";
    job_index_.erase(g.job);
    free_job_slots_.push_back(g.job_slot);
  }
  g.tasks.clear();
  g.live = 0;
  g.held = Resources();
  free_slots_.push_back(slot);
}

}  // namespace paceline::resmgr
