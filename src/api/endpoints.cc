#include "api/endpoints.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/job_not_found.h"
#include "jobmgr/serving.h"

namespace paceline::api {
namespace {

JobEndpoints EndpointsOf(const scheduler::SchedulerCore& core, const jobmgr::Job& job) {
  JobEndpoints out{.job_id = job.id().value(), .pool = job.pool(), .name = job.spec().name};
  for (uint32_t i = 0; i < job.instances(); ++i) {
    const jobmgr::TaskRuntime& t = job.task(i);
    if (t.host == jobmgr::kNoHost) continue;
    jobmgr::NotServing why = jobmgr::ServingOf(t);
    Endpoint e{.instance = i,
               .run = t.run,
               .host = core.jobs().HostName(t.host),
               .ready = why == jobmgr::NotServing::kServing,
               .why_not_ready = std::string(jobmgr::NotServingText(why))};
    if (const placement::Usage* u = core.snapshot().TaskUsage(TaskId{job.id(), i})) {
      const std::vector<std::string>& names = job.TaskFor(i)->ports;
      for (size_t k = 0; k < u->ports().size() && k < names.size(); ++k) {
        e.ports[names[k]] = static_cast<uint16_t>(u->ports()[k]);
      }
    }
    out.endpoints.push_back(std::move(e));
  }
  return out;
}

// FNV-1a, 64 bits.
class Fnv {
 public:
  void Add(std::string_view s) {
    for (char c : s) Byte(static_cast<uint8_t>(c));
    Byte(0xff);  // a separator no text byte of a field ends with, so "ab","c" != "a","bc"
  }
  void Add(uint64_t v) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  uint64_t value() const { return h_; }

 private:
  void Byte(uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::vector<JobEndpoints> CollectEndpoints(const scheduler::SchedulerCore& core) {
  std::vector<JobEndpoints> out;
  core.jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
    if (HasEndpoints(job.spec().type)) out.push_back(EndpointsOf(core, job));
    return true;
  });
  return out;
}

absl::StatusOr<JobEndpoints> CollectJobEndpoints(const scheduler::SchedulerCore& core, JobId id) {
  const jobmgr::Job* job = core.jobs().GetJob(id);
  if (job == nullptr) return JobNotFound(id.value());
  if (!HasEndpoints(job->spec().type)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " is a ", JobTypeName(job->spec().type),
                     " job: only service and stateful jobs have endpoints"));
  }
  return EndpointsOf(core, *job);
}

void ResolveAddresses(JobEndpoints& job, const HostAddressFn& address_of) {
  for (Endpoint& e : job.endpoints) {
    e.address = address_of(e.host);
    if (e.address.empty() && e.ready) {  // nothing to send clients to
      e.ready = false;
      e.why_not_ready = kNoAgentConnected;
    }
  }
}

dns::ServiceEndpoints ToDnsEndpoints(const JobEndpoints& job) {
  dns::ServiceEndpoints out{.job_id = job.job_id, .pool = job.pool, .name = job.name};
  out.instances.reserve(job.endpoints.size());
  for (const Endpoint& e : job.endpoints) {
    out.instances.push_back(
        dns::InstanceEndpoint{.instance = e.instance,
                              .address = e.address.empty() ? "0.0.0.0" : e.address,
                              .ports = e.ports,
                              .ready = e.ready && !e.address.empty()});
  }
  return out;
}

uint64_t VersionOf(const JobEndpoints& job) {
  Fnv h;
  h.Add(job.job_id);
  h.Add(job.pool);
  h.Add(job.name);
  for (const Endpoint& e : job.endpoints) {
    h.Add((uint64_t{e.instance} << 32) | e.run);
    h.Add(e.host);
    h.Add(e.address);
    h.Add(e.ports.size());
    for (const auto& [name, port] : e.ports) {
      h.Add(name);
      h.Add(uint64_t{port});
    }
    h.Add(uint64_t{e.ready});
    h.Add(e.why_not_ready);
  }
  return h.value();
}

}  // namespace paceline::api
