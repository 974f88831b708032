#include "records/batch_coalescer.h"

#include <utility>

#include "common/check.h"

namespace paceline::records {
namespace {

// Appends the records of `from` to `to`, replacing in place those whose key is already there.
template <typename Record, typename Key, typename KeyFn>
void PutAll(std::vector<Record>& to, std::vector<Record>& from,
            absl::flat_hash_map<Key, size_t>& at, KeyFn key) {
  for (Record& r : from) {
    auto [it, inserted] = at.try_emplace(key(r), to.size());
    if (inserted) {
      to.push_back(std::move(r));
    } else {
      to[it->second] = std::move(r);
    }
  }
}

}  // namespace

bool BatchCoalescer::Mergeable(const WriteBatch& b) {
  return b.put_pools.empty() && b.delete_pools.empty() && b.delete_jobs.empty() &&
         b.delete_tasks.empty() && b.put_tokens.empty() && b.delete_secrets.empty() &&
         b.put_secrets.empty() && b.audit.empty() && !b.prune_audit_before &&
         !b.prune_usage_before && !b.cluster_id;
}

void BatchCoalescer::Add(WriteBatch b) {
  PL_CHECK(Mergeable(b));
  ++batches_;
  if (batch_.empty()) {  // the common case of a lone batch: no copies
    batch_ = std::move(b);
    for (size_t i = 0; i < batch_.put_jobs.size(); ++i) job_at_[batch_.put_jobs[i].id] = i;
    for (size_t i = 0; i < batch_.put_tasks.size(); ++i) task_at_[batch_.put_tasks[i].id] = i;
    for (size_t i = 0; i < batch_.put_hosts.size(); ++i) host_at_[batch_.put_hosts[i].name] = i;
    return;
  }
  PutAll(batch_.put_jobs, b.put_jobs, job_at_, [](const JobRecord& j) { return j.id; });
  PutAll(batch_.put_tasks, b.put_tasks, task_at_, [](const TaskRecord& t) { return t.id; });
  PutAll(batch_.put_hosts, b.put_hosts, host_at_, [](const HostRecord& h) { return h.name; });
  batch_.events.insert(batch_.events.end(), std::make_move_iterator(b.events.begin()),
                       std::make_move_iterator(b.events.end()));
  batch_.add_usage.insert(batch_.add_usage.end(), std::make_move_iterator(b.add_usage.begin()),
                          std::make_move_iterator(b.add_usage.end()));
  if (b.next_job_id) batch_.next_job_id = b.next_job_id;
}

WriteBatch BatchCoalescer::Take() {
  WriteBatch out = std::move(batch_);
  batch_ = WriteBatch();
  batches_ = 0;
  job_at_.clear();
  task_at_.clear();
  host_at_.clear();
  return out;
}

}  // namespace paceline::records
