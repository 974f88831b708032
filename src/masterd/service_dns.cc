#include "masterd/service_dns.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "jobmgr/serving.h"
#include "masterd/cluster.h"
#include "scheduler/scheduler_core.h"

namespace paceline::masterd {
namespace {

// One job's endpoints as the loop sees them: the instances' host names, to be resolved to
// addresses off the loop.
struct Collected {
  dns::ServiceEndpoints endpoints;
  std::vector<std::string> hosts;  // per instance of `endpoints`
};

std::vector<Collected> Collect(const scheduler::SchedulerCore& core) {
  std::vector<Collected> out;
  core.jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    if (!HasEndpoints(job.spec().type)) return true;
    Collected& c = out.emplace_back();
    c.endpoints = dns::ServiceEndpoints{
        .job_id = job.id().value(), .pool = job.pool(), .name = job.spec().name};
    for (uint32_t i = 0; i < job.instances(); ++i) {
      const jobmgr::TaskRuntime& t = job.task(i);
      if (t.host == jobmgr::kNoHost) continue;
      dns::InstanceEndpoint e{.instance = i, .ready = jobmgr::Serving(t)};
      if (const placement::Usage* u = core.snapshot().TaskUsage(TaskId{job.id(), i})) {
        const std::vector<std::string>& names = job.TaskFor(i)->ports;
        for (size_t k = 0; k < u->ports().size() && k < names.size(); ++k) {
          e.ports[names[k]] = static_cast<uint16_t>(u->ports()[k]);
        }
      }
      c.endpoints.instances.push_back(std::move(e));
      c.hosts.push_back(core.jobs().HostName(t.host));
    }
    return true;
  });
  return out;
}

}  // namespace

ServiceDns::ServiceDns(Cluster* cluster, api::DnsServer* server, dns::ZoneOptions zone,
                       absl::Duration period)
    : cluster_(cluster), server_(server), zone_(std::move(zone)), period_(period) {}

bool ServiceDns::Refresh() {
  std::vector<Collected> jobs = cluster_->Read<std::vector<Collected>>(
      [](const scheduler::SchedulerCore& core) { return Collect(core); });
  absl::flat_hash_set<uint64_t> seen;
  for (Collected& c : jobs) {
    for (size_t k = 0; k < c.endpoints.instances.size(); ++k) {
      dns::InstanceEndpoint& e = c.endpoints.instances[k];
      e.address = cluster_->agents().AddressOf(c.hosts[k]);
      if (e.address.empty()) {  // no agent connected: nothing to send clients to
        e.address = "0.0.0.0";
        e.ready = false;
      }
    }
    seen.insert(c.endpoints.job_id);
    // A job without a DNS name is kept out of the zone; `job get` says why (dns/names.h).
    (void)zone_.Set(c.endpoints);
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
