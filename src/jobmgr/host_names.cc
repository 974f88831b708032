#include "jobmgr/host_names.h"

#include <algorithm>

namespace paceline::jobmgr {

uint32_t HostNames::Intern(const std::string& host) {
  auto [it, inserted] = index_.try_emplace(host, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(host);
  return it->second;
}

std::optional<uint32_t> HostNames::Find(const std::string& host) const {
  auto it = index_.find(host);
  return it == index_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
}

void HostNames::NoteOnHost(uint32_t h, TaskId task) {
  if (h >= on_host_.size()) {
    on_host_.resize(h + 1);
    on_host_compacted_.resize(h + 1, 0);
  }
  on_host_[h].push_back(task);
  if (on_host_[h].size() >= 2 * size_t{on_host_compacted_[h]} + 16) Compact(h);
}

const std::vector<TaskId>& HostNames::TasksOnHost(uint32_t h) const {
  static const std::vector<TaskId>* const kNone = new std::vector<TaskId>();
  if (h >= on_host_.size()) return *kNone;
  Compact(h);
  return on_host_[h];
}

void HostNames::Compact(uint32_t h) const {
  std::vector<TaskId>& list = on_host_[h];
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  std::erase_if(list, [&](const TaskId& task) {
    const Job* job = jobs_.Get(task.job);
    return job == nullptr || task.instance >= job->instances() ||
           job->task(task.instance).host != h;
  });
  on_host_compacted_[h] = static_cast<uint32_t>(list.size());
}

}  // namespace paceline::jobmgr
