#include "scheduler/host_upkeep.h"

#include <string>

#include "hostmgr/maintenance.h"

namespace paceline::scheduler {

void HostUpkeep::Restore(const records::HostRecord& h, absl::Time now) {
  placement::HostSpec spec;
  spec.name = h.name;
  spec.capacity = h.capacity;
  for (const auto& [k, v] : h.labels) spec.labels.emplace_back(k, v);
  // Known but not connected: it must register again; its tasks wait for it until the
  // host timeout, counted from now.
  HostId id = hosts_.Restore(spec, now, h.address);
  hosts_.SetMaintenance(id, h.maintenance);
  draining_ += h.maintenance == records::HostMaintenance::kDraining;
}

void HostUpkeep::Tick(absl::Time now, Actions& out) {
  Expire(now, out);
  if (draining_ > 0) Drain(now, out);
  if (!daemons_.empty()) ReconcileDaemons(now, out);
}

void HostUpkeep::Expire(absl::Time now, Actions& out) {
  for (HostId id : hosts_.Expire(now)) {
    daemons_.MarkDirty();
    const std::string& name = hosts_.Get(id).spec.name;
    (void)snapshot_.FailHost(id, placement::HostStatus::kLost);
    usage_.ForgetHost(name);
    jobmgr::Effects fx;
    jobs_.OnHostLost(name, now, fx);
    absorber_.Absorb(fx, now, out);
  }
}

void HostUpkeep::ApplyMaintenance(HostId id, records::HostMaintenance m, Actions& out) {
  draining_ -= hosts_.Get(id).maintenance == records::HostMaintenance::kDraining;
  draining_ += m == records::HostMaintenance::kDraining;
  hosts_.SetMaintenance(id, m);
  const hostmgr::TrackedHost& h = hosts_.Get(id);
  if (h.connected) (void)snapshot_.SetHostStatus(id, hostmgr::StatusOf(m));
  out.batch.put_hosts.push_back(hostmgr::RecordOf(h));
}

void HostUpkeep::Drain(absl::Time now, Actions& out) {
  for (const hostmgr::TrackedHost& h : hosts_.all()) {
    if (h.maintenance != records::HostMaintenance::kDraining) continue;
    jobmgr::Effects fx;
    if (hostmgr::DrainStep(h, jobs_, now, fx)) {
      ApplyMaintenance(h.id, records::HostMaintenance::kDrained, out);
    }
    absorber_.Absorb(fx, now, out);
  }
}

void HostUpkeep::ReconcileDaemons(absl::Time now, Actions& out) {
  jobmgr::Effects fx;
  daemons_.Reconcile(hosts_, jobs_, now, fx);
  absorber_.Absorb(fx, now, out);
}

}  // namespace paceline::scheduler
