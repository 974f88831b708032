#pragma once
// Endpoints: where the instances of a service or stateful job take traffic — the one view behind
// the endpoints API (JobService.GetEndpoints / WatchEndpoints, `paceline job endpoints`) and the
// master's DNS (masterd/service_dns.h). For each instance placed on a host: its number, its run,
// the host's name and address, its named ports (the ports placement gave it, in the order of
// the task's `ports`), and whether it is ready (jobmgr/serving.h: RUNNING, health and readiness
// passing, not being stopped; and its host's agent connected), with why when it is not.
//
// Made in two steps: Collect* read the core on the master's loop (O(instances) of the jobs read,
// no lock, no I/O); ResolveAddresses then runs off the loop and fills in the hosts' addresses
// through a HostAddressFn — the master passes one function to every user of host addresses
// (masterd/master.cc), so that where addresses come from is decided in one place.
//
// Thread-safety: Collect* on the loop (Backend::Read); the rest are pure functions of values.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"
#include "dns/zone.h"
#include "scheduler/scheduler_core.h"

namespace paceline::api {

// The IP address clients reach host `host` at; empty when it is not known (no agent connected).
using HostAddressFn = std::function<std::string(const std::string& host)>;

// Why an instance whose host has no known address is not ready.
inline constexpr const char* kNoAgentConnected = "no agent connected";

struct Endpoint {
  uint32_t instance = 0;
  uint32_t run = 0;
  std::string host;     // the host's name
  std::string address;  // the host's address; empty until resolved, or when unknown
  std::map<std::string, uint16_t> ports;  // named port -> the port on the host
  bool ready = false;
  std::string why_not_ready;  // empty when ready
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

struct JobEndpoints {
  uint64_t job_id = 0;
  std::string pool;                 // "/prod/web"
  std::string name;                 // the job's name
  std::vector<Endpoint> endpoints;  // by instance
  friend bool operator==(const JobEndpoints&, const JobEndpoints&) = default;
};

// On the loop: the endpoints of every service and stateful job, by job id.
std::vector<JobEndpoints> CollectEndpoints(const scheduler::SchedulerCore& core);
// On the loop: the endpoints of job `job`. NOT_FOUND when there is no such job;
// FAILED_PRECONDITION for a batch or daemon job (only service and stateful jobs have endpoints).
absl::StatusOr<JobEndpoints> CollectJobEndpoints(const scheduler::SchedulerCore& core, JobId job);

// Off the loop: each endpoint's address from `address_of`; an endpoint whose host has none is
// not ready (kNoAgentConnected).
void ResolveAddresses(JobEndpoints& job, const HostAddressFn& address_of);

// The same endpoints as the DNS zone takes them (dns/zone.h); an unknown address is "0.0.0.0"
// (such an instance is never ready, so the zone never answers it).
dns::ServiceEndpoints ToDnsEndpoints(const JobEndpoints& job);

// A fingerprint of the endpoints (FNV-1a over every field): equal lists have equal versions on
// every master and in every process; a change of any field changes it (but for collisions).
uint64_t VersionOf(const JobEndpoints& job);

}  // namespace paceline::api
