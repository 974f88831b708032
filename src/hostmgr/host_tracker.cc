#include "hostmgr/host_tracker.h"

namespace paceline::hostmgr {

std::pair<HostId, bool> HostTracker::Register(placement::HostSpec spec, absl::Time now,
                                              std::string address) {
  const size_t before = hosts_.size();
  const uint32_t i = Add(std::move(spec), now, /*reconnecting=*/false);
  hosts_[i].address = std::move(address);
  return {hosts_[i].id, hosts_.size() > before};
}

HostId HostTracker::Restore(placement::HostSpec spec, absl::Time now, std::string address) {
  restored_at_ = returning_at_ = now;
  const uint32_t i = Add(std::move(spec), now, /*reconnecting=*/true);
  hosts_[i].address = std::move(address);
  return hosts_[i].id;
}

uint32_t HostTracker::Add(placement::HostSpec spec, absl::Time now, bool reconnecting) {
  auto [it, inserted] = by_name_.try_emplace(spec.name, static_cast<uint32_t>(hosts_.size()));
  const uint32_t i = it->second;
  if (inserted) hosts_.push_back(TrackedHost{.id = HostId(i)});
  TrackedHost& h = hosts_[i];
  if (h.connected || h.reconnecting) connected_capacity_ -= h.spec.capacity;
  if (h.reconnecting && !reconnecting) {
    --reconnecting_;
    returning_at_ = now;  // a restored host came back: the restore goes on
  } else if (!h.reconnecting && reconnecting) {
    ++reconnecting_;
  }
  spec.id = h.id;
  h.spec = std::move(spec);
  h.connected = !reconnecting;
  h.reconnecting = reconnecting;
  h.last_seen = now;
  connected_capacity_ += h.spec.capacity;
  if (!reconnecting) beats_.push_back({now, i});  // reconnecting hosts expire with the restore
  return i;
}

bool HostTracker::Heartbeat(const std::string& name, absl::Time now) {
  auto it = by_name_.find(name);
  if (it == by_name_.end() || !hosts_[it->second].connected) return false;
  hosts_[it->second].last_seen = now;
  beats_.push_back({now, it->second});
  return true;
}

void HostTracker::Disconnect(const std::string& name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  const TrackedHost& h = hosts_[it->second];
  if (h.connected || h.reconnecting) SetDisconnected(it->second);
}

void HostTracker::SetGpuFaults(HostId id, std::vector<GpuFault> faults) {
  hosts_[id.value()].gpu_faults = std::move(faults);
}

void HostTracker::SetAgentFacts(const std::string& name, AgentFacts facts) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) hosts_[it->second].agent = std::move(facts);
}

std::vector<HostId> HostTracker::Expire(absl::Time now) {
  std::vector<HostId> out;
  // A beat older than this has expired (one subtraction per call, not one per beat popped).
  const absl::Time cutoff = now - timeout_;
  while (!beats_.empty() && beats_.front().at < cutoff) {
    const Beat b = beats_.front();
    beats_.pop_front();
    TrackedHost& h = hosts_[b.host];
    // An older entry of a host that heartbeat since, or one already disconnected: skip.
    if (!h.connected || h.last_seen != b.at) continue;
    out.push_back(h.id);
    SetDisconnected(b.host);
  }
  if (reconnecting_ > 0 &&
      (now - returning_at_ > timeout_ || now - restored_at_ > kMaxRestoreGrace * timeout_)) {
    for (uint32_t i = 0; i < hosts_.size(); ++i) {
      if (!hosts_[i].reconnecting) continue;
      out.push_back(hosts_[i].id);
      SetDisconnected(i);
    }
  }
  return out;
}

const TrackedHost* HostTracker::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &hosts_[it->second];
}

void HostTracker::SetDisconnected(uint32_t i) {
  if (hosts_[i].reconnecting) --reconnecting_;
  hosts_[i].connected = false;
  hosts_[i].reconnecting = false;
  connected_capacity_ -= hosts_[i].spec.capacity;
}

}  // namespace paceline::hostmgr
