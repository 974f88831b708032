#include "jobmgr/mutable_job.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "common/check.h"

namespace paceline::jobmgr {

MutableJob::MutableJob(JobId id, std::string pool, std::shared_ptr<const JobSpec> spec,
                       uint64_t version, records::JobGoal goal, JobOrigin origin) {
  data_.id = id;
  data_.pool = std::move(pool);
  data_.spec = std::move(spec);
  data_.version = version;
  data_.goal = goal;
  data_.origin = std::move(origin);
  data_.tasks.resize(data_.spec->instances);
  for (TaskRuntime& t : data_.tasks) t.spec_version = static_cast<uint32_t>(data_.version);
  data_.counts[static_cast<int>(TaskState::kPending)] = data_.spec->instances;
  data_.health_counts[static_cast<int>(TaskHealth::kNone)] = data_.spec->instances;
}

void MutableJob::SetHealth(uint32_t instance, TaskHealth h) {
  TaskRuntime& t = data_.tasks[instance];
  --data_.health_counts[static_cast<int>(t.health)];
  ++data_.health_counts[static_cast<int>(h)];
  t.health = h;
}

void MutableJob::SetState(uint32_t instance, TaskState s) {
  TaskRuntime& t = data_.tasks[instance];
  --data_.counts[static_cast<int>(t.state)];
  ++data_.counts[static_cast<int>(s)];
  t.state = s;
}

void MutableJob::SetSpec(std::shared_ptr<const JobSpec> spec, uint64_t version) {
  PL_CHECK(version > data_.version) << version << " after " << data_.version;
  data_.old_specs[data_.version] = std::move(data_.spec);
  data_.spec = std::move(spec);
  data_.version = version;
}

void MutableJob::PruneOldSpecs(size_t keep) {
  absl::flat_hash_set<uint64_t> used;
  for (const TaskRuntime& t : data_.tasks) {
    used.insert(t.spec_version);
    if (t.next_spec_version != 0) used.insert(t.next_spec_version);
  }
  for (const records::UpdateRecord& u : data_.updates) {
    if (records::IsActive(u.state)) used.insert(u.from_version);
  }
  size_t unused_seen = 0;
  for (auto it = data_.old_specs.rbegin(); it != data_.old_specs.rend();) {
    if (used.contains(it->first) || unused_seen++ < keep) {
      ++it;
    } else {
      it = decltype(it)(data_.old_specs.erase(std::next(it).base()));
    }
  }
}

void MutableJob::Resize(uint32_t n) {
  while (data_.tasks.size() > n) {
    const TaskRuntime& t = data_.tasks.back();
    --data_.counts[static_cast<int>(t.state)];
    --data_.health_counts[static_cast<int>(t.health)];
    NoteRetired(static_cast<uint32_t>(data_.tasks.size() - 1), t.run);
    data_.tasks.pop_back();
  }
  while (data_.tasks.size() < n) {
    const uint32_t instance = static_cast<uint32_t>(data_.tasks.size());
    TaskRuntime& t = data_.tasks.emplace_back();
    t.spec_version = static_cast<uint32_t>(data_.version);
    if (auto it = data_.retired_runs.find(instance); it != data_.retired_runs.end()) {
      t.run = it->second + 1;
      data_.retired_runs.erase(it);
    }
    ++data_.counts[static_cast<int>(t.state)];
    ++data_.health_counts[static_cast<int>(t.health)];
  }
}

void MutableJob::NoteRetired(uint32_t instance, uint32_t run) {
  uint32_t& last = data_.retired_runs[instance];
  last = std::max(last, run);
}

void MutableJob::RestoreHistory(const records::JobRecord& r) {
  for (const auto& [version, spec] : r.old_specs) {
    data_.old_specs[version] = std::make_shared<const JobSpec>(spec);
  }
  data_.updates = r.updates;
  if (r.instances != 0) Resize(r.instances);
}

records::JobRecord MutableJob::ToRecord() const {
  records::JobRecord r{data_.id,
                       data_.pool,
                       *data_.spec,
                       data_.version,
                       data_.goal,
                       data_.origin.created_at,
                       {},
                       data_.updates,
                       view_.instances(),
                       data_.origin.owner.user,
                       data_.origin.owner.group};
  for (const auto& [version, spec] : data_.old_specs) r.old_specs.emplace(version, *spec);
  return r;
}

}  // namespace paceline::jobmgr
