#include "masterd/followed_endpoints.h"

#include <string>

#include "jobmgr/serving.h"

namespace paceline::masterd {
namespace {

// The spec the run of `task` runs (jobmgr::Job::TaskFor: its spec version, else the job's).
const JobSpec& SpecOf(const records::JobRecord& job, const records::TaskRecord& task) {
  if (task.spec_version != 0 && task.spec_version != job.version) {
    if (auto it = job.old_specs.find(task.spec_version); it != job.old_specs.end()) {
      return it->second;
    }
  }
  return job.spec;
}

bool Serves(const records::TaskRecord& r) {
  jobmgr::TaskRuntime t;
  t.state = r.state;
  t.health = jobmgr::TaskHealthFromName(r.health).value_or(jobmgr::TaskHealth::kNone);
  t.readiness = jobmgr::TaskReadinessFromName(r.readiness).value_or(jobmgr::TaskReadiness::kNone);
  return jobmgr::Serving(t);
}

}  // namespace

std::vector<dns::ServiceEndpoints> FollowedEndpoints(const store::StoreMirror& followed) {
  std::vector<dns::ServiceEndpoints> out;
  const auto& tasks = followed.task_records();
  const auto& hosts = followed.host_records();
  for (const auto& [id, job] : followed.job_records()) {
    if (!HasEndpoints(job.spec.type)) continue;
    dns::ServiceEndpoints& e = out.emplace_back();
    e.job_id = id.value();
    e.pool = job.pool;
    e.name = job.spec.name;
    // The records of instances removed by a scale-down stay in the store: only those within the
    // job's size count.
    const uint32_t size = job.instances != 0 ? job.instances : job.spec.instances;
    for (auto it = tasks.lower_bound(TaskId{id, 0}); it != tasks.end() && it->first.job == id;
         ++it) {
      const records::TaskRecord& r = it->second;
      if (r.id.instance >= size || r.host.empty()) continue;
      dns::InstanceEndpoint i{.instance = r.id.instance, .ready = Serves(r)};
      const std::vector<std::string>& names = SpecOf(job, r).TaskRef(r.id.instance).ports;
      for (size_t k = 0; k < r.ports.size() && k < names.size(); ++k) {
        i.ports[names[k]] = r.ports[k];
      }
      auto h = hosts.find(r.host);
      i.address = h != hosts.end() ? h->second.address : "";
      if (i.address.empty()) {  // registered before addresses were kept: nowhere to send clients
        i.address = "0.0.0.0";
        i.ready = false;
      }
      e.instances.push_back(std::move(i));
    }
  }
  return out;
}

}  // namespace paceline::masterd
