#include "store/store_mirror.h"

#include <type_traits>
#include <utility>

namespace paceline::store {

void StoreMirror::Apply(StoreChanges changes) {
  for (const std::string& path : changes.deleted_pools) pools_.erase(path);
  for (const TaskId& t : changes.deleted_tasks) tasks_.erase(t);
  for (JobId job : changes.deleted_jobs) {
    jobs_.erase(job);
    auto it = tasks_.lower_bound(TaskId{job, 0});
    while (it != tasks_.end() && it->first.job == job) it = tasks_.erase(it);
  }
  for (const std::string& path : changes.deleted_secrets) secrets_.erase(path);
  records::StoreContents& c = changes.changed;
  for (records::PoolRecord& p : c.pools) pools_.insert_or_assign(p.path, std::move(p));
  for (records::JobRecord& j : c.jobs) jobs_.insert_or_assign(j.id, std::move(j));
  for (records::TaskRecord& t : c.tasks) tasks_.insert_or_assign(t.id, std::move(t));
  for (records::HostRecord& h : c.hosts) hosts_.insert_or_assign(h.name, std::move(h));
  for (records::TokenRecord& t : c.tokens) tokens_.insert_or_assign(t.id, std::move(t));
  for (records::SecretRecord& r : c.secrets) secrets_.insert_or_assign(r.path, std::move(r));
  next_job_id_ = c.next_job_id;
  cluster_id_ = std::move(c.cluster_id);
  rev_ = changes.rev;
}

namespace {

// The values of `rows`, in key order, copied from an lvalue map and moved from an rvalue one.
template <typename Map, typename Record>
void Values(Map&& rows, std::vector<Record>& out) {
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    if constexpr (std::is_lvalue_reference_v<Map>) {
      out.push_back(row);
    } else {
      out.push_back(std::move(row));
    }
  }
}

}  // namespace

records::StoreContents StoreMirror::Contents() const {
  records::StoreContents out;
  Values(pools_, out.pools);
  Values(jobs_, out.jobs);
  Values(tasks_, out.tasks);
  Values(hosts_, out.hosts);
  Values(tokens_, out.tokens);
  Values(secrets_, out.secrets);
  out.next_job_id = next_job_id_;
  out.cluster_id = cluster_id_;
  return out;
}

records::StoreContents StoreMirror::TakeContents() && {
  records::StoreContents out;
  Values(std::move(pools_), out.pools);
  Values(std::move(jobs_), out.jobs);
  Values(std::move(tasks_), out.tasks);
  Values(std::move(hosts_), out.hosts);
  Values(std::move(tokens_), out.tokens);
  Values(std::move(secrets_), out.secrets);
  out.next_job_id = next_job_id_;
  out.cluster_id = std::move(cluster_id_);
  return out;
}

}  // namespace paceline::store
