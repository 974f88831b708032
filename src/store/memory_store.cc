#include "store/memory_store.h"

#include "common/status.h"
#include "store/audit_query.h"

namespace paceline::store {

void MemoryStore::Apply(const records::WriteBatch& b, State& s) {
  for (const records::PoolRecord& p : b.put_pools) s.pools[p.path] = p;
  for (const records::JobRecord& j : b.put_jobs) s.jobs[j.id] = j;
  for (const records::TaskRecord& t : b.put_tasks) s.tasks[t.id] = t;
  for (const TaskId& t : b.delete_tasks) s.tasks.erase(t);
  for (const records::TaskEvent& e : b.events) s.events[e.run.task].push_back(e);
  for (const records::HostRecord& h : b.put_hosts) s.hosts[h.name] = h;
  for (JobId id : b.delete_jobs) {
    s.jobs.erase(id);
    auto first = s.tasks.lower_bound(TaskId{id, 0});
    auto last = s.tasks.lower_bound(TaskId{JobId(id.value() + 1), 0});
    s.tasks.erase(first, last);
    s.events.erase(s.events.lower_bound(TaskId{id, 0}),
                   s.events.lower_bound(TaskId{JobId(id.value() + 1), 0}));
  }
  for (const std::string& path : b.delete_pools) s.pools.erase(path);
  for (const records::TokenRecord& t : b.put_tokens) s.tokens[t.id] = t;
  for (const std::string& path : b.delete_secrets) s.secrets.erase(path);
  for (const records::SecretRecord& r : b.put_secrets) s.secrets[r.path] = r;
  for (records::AuditRecord a : b.audit) {
    a.seq = ++s.last_audit_seq;
    s.audit.emplace(a.seq, std::move(a));
  }
  if (b.prune_audit_before) {
    std::erase_if(s.audit,
                  [&](const auto& entry) { return entry.second.at < *b.prune_audit_before; });
  }
  for (const records::UsageRecord& u : b.add_usage) {
    auto [it, added] = s.usage.try_emplace(std::tie(u.hour, u.pool, u.job, u.owner, u.user), u);
    if (!added) records::AddUsage(it->second, u);
  }
  if (b.prune_usage_before) {
    s.usage.erase(s.usage.begin(),
                  s.usage.lower_bound(std::make_tuple(*b.prune_usage_before, std::string(),
                                                      JobId(0), std::string(), std::string())));
  }
  if (b.next_job_id) s.next_job_id = *b.next_job_id;
  if (b.cluster_id) s.cluster_id = *b.cluster_id;
}

absl::Status MemoryStore::CommitAll(const std::vector<const records::WriteBatch*>& batches) {
  // Nothing here can fail half-way, so applying in place is atomic.
  for (const records::WriteBatch* b : batches) Apply(*b, state_);
  return absl::OkStatus();
}

absl::StatusOr<records::StoreContents> MemoryStore::Load() {
  records::StoreContents c;
  for (const auto& [_, p] : state_.pools) c.pools.push_back(p);
  for (const auto& [_, j] : state_.jobs) c.jobs.push_back(j);
  for (const auto& [_, t] : state_.tasks) c.tasks.push_back(t);
  for (const auto& [_, h] : state_.hosts) c.hosts.push_back(h);
  for (const auto& [_, t] : state_.tokens) c.tokens.push_back(t);
  for (const auto& [_, r] : state_.secrets) c.secrets.push_back(r);
  c.next_job_id = state_.next_job_id;
  c.cluster_id = state_.cluster_id;
  return c;
}

absl::StatusOr<std::vector<records::TaskEvent>> MemoryStore::ListEvents(TaskId task, size_t limit) {
  auto it = state_.events.find(task);
  if (it == state_.events.end()) return std::vector<records::TaskEvent>{};
  const std::vector<records::TaskEvent>& all = it->second;
  size_t start = (limit > 0 && all.size() > limit) ? all.size() - limit : 0;
  return std::vector<records::TaskEvent>(all.begin() + start, all.end());
}

absl::Status MemoryStore::ForEachEvent(const EventFn& fn) {
  for (const auto& [_, events] : state_.events) {
    for (const records::TaskEvent& e : events) RETURN_IF_ERROR(fn(e));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<records::JobHistory>> MemoryStore::ReadJob(JobId job) {
  auto it = state_.jobs.find(job);
  if (it == state_.jobs.end()) return std::nullopt;
  records::JobHistory h;
  h.job = it->second;
  const TaskId first{job, 0}, end{JobId(job.value() + 1), 0};
  for (auto t = state_.tasks.lower_bound(first); t != state_.tasks.lower_bound(end); ++t) {
    h.tasks.push_back(t->second);
  }
  for (auto e = state_.events.lower_bound(first); e != state_.events.lower_bound(end); ++e) {
    h.events.insert(h.events.end(), e->second.begin(), e->second.end());
  }
  return h;
}

absl::StatusOr<StoreStats> MemoryStore::Stats() {
  StoreStats s;
  int64_t events = 0;
  for (const auto& [_, list] : state_.events) events += static_cast<int64_t>(list.size());
  s.rows = {{"audit", static_cast<int64_t>(state_.audit.size())},
            {"events", events},
            {"hosts", static_cast<int64_t>(state_.hosts.size())},
            {"jobs", static_cast<int64_t>(state_.jobs.size())},
            {"pools", static_cast<int64_t>(state_.pools.size())},
            {"secrets", static_cast<int64_t>(state_.secrets.size())},
            {"tasks", static_cast<int64_t>(state_.tasks.size())},
            {"tokens", static_cast<int64_t>(state_.tokens.size())}};
  return s;
}

absl::StatusOr<std::vector<records::AuditRecord>> MemoryStore::ListAudit(
    const records::AuditQuery& query) {
  std::vector<records::AuditRecord> out;
  for (auto it = state_.audit.rbegin(); it != state_.audit.rend() && out.size() < query.limit;
       ++it) {
    if (AuditMatches(it->second, query)) out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<std::vector<records::UsageRecord>> MemoryStore::ListUsage(
    const records::UsageQuery& query) {
  std::vector<records::UsageRecord> out;
  for (const auto& [_, u] : state_.usage) {
    if (records::UsageMatches(u, query)) out.push_back(u);
  }
  return out;
}

}  // namespace paceline::store
