#pragma once
// FollowedEndpoints: a standby's view of the endpoints of the service and stateful jobs, built
// from the state it follows (store/store_mirror.h) rather than from a core (a standby's core is
// empty until it leads). For each instance with a record within the job's size: its host's
// address as the host's agent last registered it (HostRecord::address), its named ports as the
// record keeps them (TaskRecord::ports, named by the task of the run's spec version), and
// whether it serves by the same rule as the leader's (jobmgr/serving.h: RUNNING, health none or
// HEALTHY, readiness none or READY, from TaskRecord::health and ::readiness).
//
// No agent is connected to a standby, so the stored address stands in for the connected agent's
// (an instance whose host has no stored address is not ready). The leader answers from its core
// and its connected agents instead (service_dns.h): there an instance whose host has no
// connected agent is not ready.
//
// How stale this is: the state is as old as the standby's last read of the store
// (CoreKeeper::ReplicationLag: the follow interval, 500 ms, plus the read), and the leader
// commits each change before it answers from it.
//
// Thread-safety: a pure function of the mirror (read it on the loop, CoreKeeper::ReadFollowed).
// Cost: O(jobs + their task records) per call.

#include <vector>

#include "dns/zone.h"
#include "store/store_mirror.h"

namespace paceline::masterd {

std::vector<dns::ServiceEndpoints> FollowedEndpoints(const store::StoreMirror& followed);

}  // namespace paceline::masterd
