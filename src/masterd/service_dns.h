#pragma once
// ServiceDns: the master's DNS for services (docs/services.md, "Finding a service by name").
// Every `period`, one read on the loop collects the endpoints of the service and stateful jobs
// (api/endpoints.h): each instance's host, its named ports, and whether it is ready — RUNNING,
// its health and readiness checks (if any) passing, not being stopped. Off the loop, the hosts'
// addresses come from `address_of` (an instance whose host has none is not ready), the zone
// (dns/zone.h) takes the jobs that changed and drops the jobs that are gone, and a copy is
// published to the DnsServer when anything changed. So an instance's change shows in DNS within
// `period` plus a scheduling turn; the cost on the loop is O(jobs + service instances) per pass.
//
// Every master started with --dns-listen answers, leader or standby. The leader answers from its
// core and its connected agents. A standby's core is empty and no agent connects to it: it
// answers from the state it follows instead (masterd/followed_endpoints.h: the task records'
// state, checks and ports, the hosts' stored addresses). Its answers lag the leader's by its
// replication lag plus one pass: the follow interval (500 ms) and the read, plus `period` —
// under a second while the database answers (docs/services.md, "Several masters").
//
// Thread-safety: Start/Stop from one thread; Refresh (the pass) from one thread at a time.

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "api/dns_server.h"
#include "api/endpoints.h"
#include "dns/zone.h"

namespace paceline::masterd {

class Cluster;

class ServiceDns {
 public:
  // `address_of`: where hosts' addresses come from (the master's one function for them).
  ServiceDns(Cluster* cluster, api::HostAddressFn address_of, api::DnsServer* server,
             dns::ZoneOptions zone, absl::Duration period);
  ~ServiceDns() { Stop(); }

  // One pass; whether a new zone was published.
  bool Refresh();

  void Start();
  void Stop();

 private:
  Cluster* cluster_;
  api::HostAddressFn address_of_;
  api::DnsServer* server_;
  dns::Zone zone_;
  uint32_t published_serial_ = 0;
  absl::Duration period_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace paceline::masterd
