#include "masterd/service_dns.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "masterd/cluster.h"
#include "masterd/followed_endpoints.h"
#include "scheduler/scheduler_core.h"

namespace paceline::masterd {

ServiceDns::ServiceDns(Cluster* cluster, api::HostAddressFn address_of, api::DnsServer* server,
                       dns::ZoneOptions zone, absl::Duration period)
    : cluster_(cluster),
      address_of_(std::move(address_of)),
      server_(server),
      zone_(std::move(zone)),
      period_(period) {}

bool ServiceDns::Refresh() {
  absl::flat_hash_set<uint64_t> seen;
  // A standby answers from the state it follows (followed_endpoints.h), the leader from its core.
  std::vector<dns::ServiceEndpoints> followed;
  const bool standby = cluster_->keeper().ReadFollowed(
      [&](const store::StoreMirror& m) { followed = FollowedEndpoints(m); });
  for (const dns::ServiceEndpoints& job : followed) {
    seen.insert(job.job_id);
    (void)zone_.Set(job);
  }
  std::vector<api::JobEndpoints> jobs;
  if (!standby) {
    jobs = cluster_->Read<std::vector<api::JobEndpoints>>(
        [](const scheduler::SchedulerCore& core) { return api::CollectEndpoints(core); });
  }
  for (api::JobEndpoints& job : jobs) {
    api::ResolveAddresses(job, address_of_);
    seen.insert(job.job_id);
    // A job without a DNS name is kept out of the zone; `job get` says why (dns/names.h).
    (void)zone_.Set(api::ToDnsEndpoints(job));
  }
  std::vector<uint64_t> gone;
  for (uint64_t id : zone_.job_ids()) {
    if (!seen.contains(id)) gone.push_back(id);
  }
  for (uint64_t id : gone) zone_.Remove(id);
  if (zone_.Soa().serial == published_serial_) return false;
  published_serial_ = zone_.Soa().serial;
  server_->Publish(std::make_shared<const dns::Zone>(zone_));
  return true;
}

void ServiceDns::Start() {
  thread_ = std::thread([this] {
    do {
      Refresh();
    } while (!stop_.WaitForNotificationWithTimeout(period_));
  });
}

void ServiceDns::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

}  // namespace paceline::masterd
