#include "scheduler/usage_tracker.h"

#include <algorithm>

namespace paceline::scheduler {
namespace {

// max(0, allocated - used) in cpu and memory; the other dimensions are not measured.
Resources SlackOf(const Resources& allocated, const Resources& used) {
  Resources s;
  for (Dim d : {Dim::kCpu, Dim::kMemory}) s[d] = std::max<int64_t>(0, allocated[d] - used[d]);
  return s;
}

}  // namespace

void UsageTracker::Report(const std::string& host, const HostUsageSample& sample,
                          const std::vector<RunUsageSample>& runs, absl::Time now) {
  HostEntry& h = hosts_[host];
  for (const TaskId& t : h.tasks) {
    auto it = runs_.find(t);
    if (it != runs_.end() && it->second.host == host) runs_.erase(it);
  }
  h.tasks.clear();
  h.view = HostUsageView();
  h.view.used = sample.used;
  h.view.memory_total_bytes = sample.memory_total_bytes;
  h.view.at = now;
  h.expires = now + sample.interval * stale_after_;
  MarkChanged(host, true);
  expiries_.push(Expiry{h.expires, host});
  for (const RunUsageSample& r : runs) {
    RunEntry e;
    e.run = r.run.run;
    e.host = host;
    e.used = r.used;
    if (r.regular) e.slack = SlackOf(r.allocated, r.used);
    h.view.tasks_used += e.used;
    h.view.slack += e.slack;
    h.tasks.push_back(r.run.task);
    runs_[r.run.task] = std::move(e);
  }
}

void UsageTracker::Forget(TaskId task) {
  auto it = runs_.find(task);
  if (it == runs_.end()) return;
  auto h = hosts_.find(it->second.host);
  if (h != hosts_.end()) {
    h->second.view.slack -= it->second.slack;
    h->second.view.tasks_used -= it->second.used;
    if (!it->second.slack.IsZero()) MarkChanged(h->first, false);
  }
  runs_.erase(it);
}

void UsageTracker::ForgetHost(const std::string& host) {
  auto h = hosts_.find(host);
  if (h == hosts_.end()) return;
  for (const TaskId& t : h->second.tasks) {
    auto it = runs_.find(t);
    if (it != runs_.end() && it->second.host == host) runs_.erase(it);
  }
  hosts_.erase(h);
  MarkChanged(host, false);
}

void UsageTracker::MarkChanged(const std::string& host, bool reported) {
  auto [it, inserted] = changed_.try_emplace(host, reported);
  if (!inserted) it->second = it->second || reported;
}

Resources UsageTracker::HostSlack(const std::string& host, absl::Time now) const {
  auto h = hosts_.find(host);
  if (h == hosts_.end() || !Fresh(h->second, now)) return Resources();
  return h->second.view.slack;
}

std::vector<UsageTracker::SlackChange> UsageTracker::TakeSlackChanges(absl::Time now) {
  while (!expiries_.empty() && expiries_.top().at <= now) {
    const Expiry& e = expiries_.top();
    auto h = hosts_.find(e.host);
    // Only the latest report's expiry counts; earlier ones were superseded.
    if (h != hosts_.end() && h->second.expires == e.at) MarkChanged(e.host, false);
    expiries_.pop();
  }
  std::vector<SlackChange> out;
  out.reserve(changed_.size());
  for (auto& [host, reported] : changed_) out.push_back(SlackChange{host, reported});
  changed_.clear();
  std::sort(out.begin(), out.end(),
            [](const SlackChange& a, const SlackChange& b) { return a.host < b.host; });
  return out;
}

Resources UsageTracker::AllocatedUnused(absl::Time now) const {
  Resources total;
  for (const auto& [name, h] : hosts_) {
    if (Fresh(h, now)) total += h.view.slack;
  }
  return total;
}

std::optional<RunUsageView> UsageTracker::RunUsage(TaskId task, absl::Time now) const {
  auto it = runs_.find(task);
  if (it == runs_.end()) return std::nullopt;
  auto h = hosts_.find(it->second.host);
  if (h == hosts_.end() || !Fresh(h->second, now)) return std::nullopt;
  return RunUsageView{it->second.run, it->second.used, h->second.view.at};
}

std::optional<HostUsageView> UsageTracker::HostUsage(const std::string& host,
                                                     absl::Time now) const {
  auto h = hosts_.find(host);
  if (h == hosts_.end() || !Fresh(h->second, now)) return std::nullopt;
  return h->second.view;
}

}  // namespace paceline::scheduler
