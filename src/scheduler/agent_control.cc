#include "scheduler/agent_control.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "hostmgr/maintenance.h"

namespace paceline::scheduler {

absl::Status AgentControl::RegisterHost(const HostRegistration& reg,
                                        const std::vector<ReportedRun>& running, absl::Time now,
                                        Actions& out) {
  if (reg.name.empty()) return absl::InvalidArgumentError("host name: empty");
  placement::HostSpec spec;
  spec.name = reg.name;
  spec.labels = reg.labels;
  spec.capacity = reg.capacity;
  spec.capacity[Dim::kGpu] = static_cast<int64_t>(reg.gpu_models.size()) * kMilliPerUnit;
  spec.gpu_models = reg.gpu_models;
  spec.ports = reg.ports;
  HostId id = parts_.hosts.Register(spec, now, reg.address).first;
  spec.id = id;
  if (parts_.snapshot.host(id) == nullptr) {
    RETURN_IF_ERROR(parts_.snapshot.AddHost(spec));
  } else {
    // A host that reconnects keeps the tasks the snapshot holds for it; it takes work again.
    RETURN_IF_ERROR(parts_.snapshot.SetHostLabels(id, spec.labels));
    RETURN_IF_ERROR(parts_.snapshot.SetHostStatus(id, placement::HostStatus::kUp));
  }
  // Its maintenance state (drained, down ...) outlives reconnections.
  parts_.upkeep.ApplyMaintenance(id, parts_.hosts.Get(id).maintenance, out);
  parts_.upkeep.MarkDirty();

  // Reconcile: what the agent has against what the core believes.
  jobmgr::Effects fx;
  std::vector<RunId> believed = parts_.jobs.LiveRunsOnHost(reg.name);
  std::vector<RunId> reported;
  for (const ReportedRun& r : running) reported.push_back(r.run);
  std::sort(reported.begin(), reported.end());
  for (const RunId& run : believed) {
    if (!std::binary_search(reported.begin(), reported.end(), run)) {
      parts_.jobs.OnStatus({run, reg.name, TaskState::kLost, -1, 0, jobmgr::TaskReason::kHostLost,
                            "the agent no longer has this task"},
                           now, fx);
    }
  }
  // At millions of tasks every run's records are far apart in memory: ask for all of them first,
  // so that the loads overlap instead of waiting one after the other.
  // (Each adopted run gets the next gang id.)
  uint64_t gang = parts_.gangs.next_id();
  for (const ReportedRun& r : running) {
    parts_.rm.Prefetch(r.run.task, resmgr::GangId(gang++));
    parts_.snapshot.Prefetch(r.run.task);
    if (const jobmgr::Job* job = parts_.jobs.GetJob(r.run.task.job);
        job != nullptr && r.run.task.instance < job->instances()) {
      __builtin_prefetch(&job->task(r.run.task.instance));
    }
  }
  for (const ReportedRun& r : running) {
    parts_.jobs.OnStatus({r.run, reg.name, TaskState::kRunning}, now, fx);
    // Only a run placed on this host is accounted on it (OnStatus stops the others).
    const jobmgr::Job* job = parts_.jobs.GetJob(r.run.task.job);
    if (job == nullptr || r.run.task.instance >= job->instances()) continue;
    const uint32_t placed_on = job->task(r.run.task.instance).host;
    if (placed_on == jobmgr::kNoHost || parts_.jobs.HostName(placed_on) == reg.name) {
      Adopt(r, id, now);
    }
  }
  parts_.absorber.Absorb(fx, now, out);
  return absl::OkStatus();
}

void AgentControl::Adopt(const ReportedRun& r, HostId host, absl::Time now) {
  const TaskId task = r.run.task;
  const jobmgr::Job* job = parts_.jobs.GetJob(task.job);
  if (job == nullptr || task.instance >= job->instances()) return;
  const jobmgr::TaskRuntime& t = job->task(task.instance);
  if (t.run != r.run.run || !MayHaveProcess(t.state)) return;  // not ours: being killed
  absl::StatusOr<std::shared_ptr<const placement::TaskShape>> shape =
      parts_.shapes.ShapeOf(*job, task.instance);
  if (!shape.ok()) return;
  // ALREADY_EXISTS: accounted for already (its agent registered again).
  absl::Status accounted = parts_.gangs.Adopt(*job, task, now);
  if (absl::IsAlreadyExists(accounted)) return;
  placement::Assignment a;
  a.task = task;
  a.host = host;
  a.shape = *shape;
  for (const std::string& name : (*shape)->port_names) {
    for (const auto& [n, port] : r.ports) {
      if (n == name) a.ports.push_back(port);
    }
  }
  int64_t gpu = (*shape)->gpu_milli();
  for (uint32_t d : r.gpu_devices) {
    a.gpus.push_back({static_cast<uint16_t>(d),
                      static_cast<int32_t>(gpu < kMilliPerUnit ? gpu : kMilliPerUnit)});
  }
  absl::Status committed = parts_.snapshot.Adopt(a);
  if (!committed.ok()) {
    parts_.why.Set(task, absl::StrCat("adopted after a restart but not accounted on its host: ",
                                      committed.message()));
  }
}

bool AgentControl::Heartbeat(const std::string& host, absl::Time now) {
  return parts_.hosts.Heartbeat(host, now);
}

void AgentControl::OnStatus(const jobmgr::StatusReport& report, absl::Time now, Actions& out) {
  jobmgr::Effects fx;
  parts_.jobs.OnStatus(report, now, fx);
  // NOT_FOUND: the task holds nothing in the resource manager.
  if (report.state == TaskState::kRunning) (void)parts_.rm.MarkRunning(report.run.task, now);
  parts_.absorber.Absorb(fx, now, out);
}

void AgentControl::ReportUsage(const std::string& host, const HostUsageSample& sample,
                               const std::vector<ReportedUsage>& runs, absl::Time now) {
  std::vector<RunUsageSample> samples;
  samples.reserve(runs.size());
  for (const ReportedUsage& r : runs) {
    const jobmgr::Job* job = parts_.jobs.GetJob(r.run.task.job);
    if (job == nullptr || r.run.task.instance >= job->instances()) continue;
    const jobmgr::TaskRuntime& t = job->task(r.run.task.instance);
    if (t.run != r.run.run || t.state != TaskState::kRunning || t.host == jobmgr::kNoHost ||
        parts_.jobs.HostName(t.host) != host) {
      continue;
    }
    const JobSpec& spec = job->spec();
    RunUsageSample s;
    s.run = r.run;
    s.used = r.used;
    TaskSpec scratch;
    s.allocated = spec.TaskFor(r.run.task.instance, scratch).resources;
    s.regular = resmgr::SlaClassOf(spec.sla) != resmgr::SlaClass::kRevocable;
    samples.push_back(s);
  }
  parts_.usage.Report(host, sample, samples, now);
  if (sample.images) {
    if (const hostmgr::TrackedHost* h = parts_.hosts.Find(host)) {
      absl::flat_hash_map<std::string, int64_t> by_ref;
      for (const HostImage& img : *sample.images) {
        for (const std::string& ref : img.refs) by_ref[ref] = img.size_bytes;
      }
      parts_.snapshot.SetHostImages(h->id, std::move(by_ref)).IgnoreError();
      host_images_[host] = *sample.images;
    }
  }
}

std::optional<RunUsageView> AgentControl::RunUsage(TaskId task, absl::Time now) const {
  std::optional<RunUsageView> v = parts_.usage.RunUsage(task, now);
  const jobmgr::Job* job = parts_.jobs.GetJob(task.job);
  if (!v || job == nullptr || task.instance >= job->instances() ||
      job->task(task.instance).run != v->run) {
    return std::nullopt;
  }
  return v;
}

absl::Status AgentControl::SetGpuFaults(const std::string& host,
                                        std::vector<hostmgr::GpuFault> faults, absl::Time now,
                                        Actions& out) {
  const hostmgr::TrackedHost* h = parts_.hosts.Find(host);
  if (h == nullptr || !h->connected) {
    return absl::FailedPreconditionError(absl::StrCat("host ", host, " is not connected"));
  }
  const size_t devices = h->spec.gpu_models.size();
  std::sort(faults.begin(), faults.end(),
            [](const auto& a, const auto& b) { return a.device < b.device; });
  for (size_t i = 0; i < faults.size(); ++i) {
    if (faults[i].device >= devices) {
      return absl::InvalidArgumentError(absl::StrCat("gpu fault: device ", faults[i].device,
                                                     ": the host has ", devices, " GPUs"));
    }
    if (i > 0 && faults[i].device == faults[i - 1].device) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu fault: device ", faults[i].device, " is listed twice"));
    }
  }
  const HostId id = h->id;
  absl::flat_hash_map<uint32_t, const hostmgr::GpuFault*> fresh;  // newly unhealthy devices
  for (const hostmgr::GpuFault& f : faults) {
    auto was = std::find_if(h->gpu_faults.begin(), h->gpu_faults.end(),
                            [&](const auto& o) { return o.device == f.device; });
    if (was == h->gpu_faults.end()) fresh[f.device] = &f;
  }
  for (size_t d = 0; d < devices; ++d) {
    bool bad =
        std::any_of(faults.begin(), faults.end(), [&](const auto& f) { return f.device == d; });
    parts_.snapshot.SetGpuHealth(id, d, !bad).IgnoreError();  // checked above
  }
  // The runs holding a device that just failed are told.
  jobmgr::Effects fx;
  if (const placement::HostState* state = parts_.snapshot.host(id); state && !fresh.empty()) {
    const std::vector<TaskId> tasks = state->tasks();
    for (const TaskId& t : tasks) {
      const placement::Usage* u = parts_.snapshot.TaskUsage(t);
      const jobmgr::Job* job = parts_.jobs.GetJob(t.job);
      if (u == nullptr || job == nullptr || t.instance >= job->instances()) continue;
      for (const placement::GpuShare& share : u->gpus()) {
        auto f = fresh.find(share.device);
        if (f == fresh.end()) continue;
        parts_.jobs.OnStatus(
            {RunId{t, job->task(t.instance).run}, host, TaskState::kRunning, -1, 0,
             jobmgr::TaskReason::kGpuUnhealthy,
             absl::StrCat("GPU ", share.device, " (", h->spec.gpu_models[share.device],
                          ") of host ", host, " is unhealthy: ", f->second->reason)},
            now, fx);
        break;
      }
    }
  }
  parts_.hosts.SetGpuFaults(id, std::move(faults));  // `fresh` points into `faults`: last
  parts_.absorber.Absorb(fx, now, out);
  return absl::OkStatus();
}

void AgentControl::SetAgentFacts(const std::string& host, hostmgr::AgentFacts facts) {
  parts_.hosts.SetAgentFacts(host, std::move(facts));
}

absl::Status AgentControl::SetMaintenance(const std::string& name, records::HostMaintenance next,
                                          absl::Time now, Actions& out) {
  const hostmgr::TrackedHost* h = parts_.hosts.Find(name);
  if (h == nullptr) return absl::NotFoundError(absl::StrCat("host ", name, " not found"));
  ASSIGN_OR_RETURN(bool changes, hostmgr::CheckTransition(*h, next, parts_.jobs));
  if (!changes) return absl::OkStatus();
  parts_.upkeep.ApplyMaintenance(h->id, next, out);
  parts_.upkeep.MarkDirty();
  if (next == records::HostMaintenance::kDraining) parts_.upkeep.Drain(now, out);
  return absl::OkStatus();
}

const std::vector<HostImage>& AgentControl::HostImages(const std::string& host) const {
  static const auto* none = new std::vector<HostImage>();
  auto it = host_images_.find(host);
  return it == host_images_.end() ? *none : it->second;
}

std::optional<HostUsageView> AgentControl::HostUsage(const std::string& host,
                                                     absl::Time now) const {
  return parts_.usage.HostUsage(host, now);
}

Resources AgentControl::OfferedCapacity() const {
  Resources r = parts_.hosts.connected_capacity();
  r[Dim::kGpu] -= parts_.snapshot.WithheldGpuMilli();
  return r;
}

Resources AgentControl::AllocatedUnused(absl::Time now) const {
  return parts_.usage.AllocatedUnused(now);
}

}  // namespace paceline::scheduler
