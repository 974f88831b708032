#include "scheduler/host_tracker.h"

namespace paceline::scheduler {

std::pair<HostId, bool> HostTracker::Register(placement::HostSpec spec, absl::Time now) {
  auto [it, inserted] = by_name_.try_emplace(spec.name, static_cast<uint32_t>(hosts_.size()));
  if (inserted) hosts_.push_back(TrackedHost{HostId(it->second), {}, false, now});
  TrackedHost& h = hosts_[it->second];
  spec.id = h.id;
  h.spec = std::move(spec);
  h.connected = true;
  h.last_seen = now;
  return {h.id, inserted};
}

bool HostTracker::Heartbeat(const std::string& name, absl::Time now) {
  auto it = by_name_.find(name);
  if (it == by_name_.end() || !hosts_[it->second].connected) return false;
  hosts_[it->second].last_seen = now;
  return true;
}

void HostTracker::Disconnect(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) hosts_[it->second].connected = false;
}

void HostTracker::SetIsolation(const std::string& name, std::string isolation) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) hosts_[it->second].isolation = std::move(isolation);
}

std::vector<HostId> HostTracker::Expire(absl::Time now) {
  std::vector<HostId> out;
  for (TrackedHost& h : hosts_) {
    if (h.connected && now - h.last_seen > timeout_) {
      h.connected = false;
      out.push_back(h.id);
    }
  }
  return out;
}

const TrackedHost* HostTracker::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &hosts_[it->second];
}

}  // namespace paceline::scheduler
