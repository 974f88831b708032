#include "scheduler/absorber.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "scheduler/accounting.h"

namespace paceline::scheduler {

void Absorber::Absorb(jobmgr::Effects& fx, absl::Time now, Actions& out) {
  for (const TaskId& t : fx.release) ReleaseTask(t);
  for (const TaskId& t : fx.withdraw) {
    std::optional<resmgr::GangId> gid = rm_.GangOf(t);
    if (!gid.has_value()) continue;
    std::optional<resmgr::GangMembers> g = rm_.Members(*gid);
    if (g.has_value() && g->state == resmgr::GangState::kQueued) {
      (void)rm_.Cancel(*gid);
    } else {
      ReleaseTask(t);
    }
  }
  // A cron job's own tasks never run: its runs are jobs of their own (cron_runs.h).
  std::erase_if(fx.enqueue, [&](TaskId t) {
    const jobmgr::Job* job = jobs_.GetJob(t.job);
    return job != nullptr && job->spec().schedule.has_value();
  });
  if (!fx.enqueue.empty()) gangs_.Enqueue(fx.enqueue, now);

  PeerCache peers;
  PlacedNow placed;
  for (const jobmgr::LaunchCommand& l : fx.launches) placed[l.run.task] = &l.placed;
  for (const jobmgr::LaunchCommand& l : fx.launches) {
    const jobmgr::Job* job = jobs_.GetJob(l.run.task.job);
    if (job == nullptr) continue;
    const uint32_t instance = l.run.task.instance;
    const jobmgr::TaskRuntime& runtime = job->task(instance);  // read once: the run's record
    Launch launch;
    launch.run = l.run;
    launch.host = l.placed.host;
    launch.pool = job->pool();
    launch.ports = l.placed.ports;
    launch.gpu_devices = l.placed.gpu_devices;
    launch.task = job->TaskFor(instance);
    launch.spec_version = runtime.spec_version;
    launch.gang_size = std::max<uint32_t>(1, job->spec().sla.min_running_instances);
    if (launch.gang_size > 1) launch.peers = PeersOf(l.run.task, launch.gang_size, placed, peers);
    if (const RoleSpec* role = job->spec().RoleOf(instance)) launch.role = role->name;
    launch.rendezvous = job->spec().gang.rendezvous;
    launch.rendezvous_port = job->spec().gang.port;
    launch.gang_attempt = runtime.gang_attempt;
    out.launches.push_back(std::move(launch));
  }
  auto move_all = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  NoteFinished(fx, now);
  std::vector<records::UsageRecord> used = UsageOfEndedRuns(jobs_, fx.batch);  // accounting.h
  move_all(out.batch.add_usage, used);
  RecordPorts(fx.batch.put_tasks, placed);
  move_all(out.kills, fx.kills);
  move_all(out.batch.put_jobs, fx.batch.put_jobs);
  move_all(out.batch.put_tasks, fx.batch.put_tasks);
  move_all(out.batch.delete_tasks, fx.batch.delete_tasks);
  move_all(out.batch.events, fx.batch.events);
  for (JobId id : fx.batch.delete_jobs) retention_.Forget(id);
  move_all(out.batch.delete_jobs, fx.batch.delete_jobs);
  if (fx.batch.next_job_id) out.batch.next_job_id = fx.batch.next_job_id;
  fx = jobmgr::Effects();
}

void Absorber::NoteFinished(const jobmgr::Effects& fx, absl::Time now) {
  JobId last(0);  // events come in runs of one job: skip the repeats
  auto note = [&](JobId id) {
    if (id == last) return;
    last = id;
    if (const jobmgr::Job* job = jobs_.GetJob(id)) retention_.Update(*job, now);
  };
  for (const records::JobRecord& j : fx.batch.put_jobs) note(j.id);
  for (const records::TaskEvent& e : fx.batch.events) note(e.run.task.job);
}

void Absorber::RecordPorts(std::vector<records::TaskRecord>& tasks, const PlacedNow& placed) const {
  std::optional<JobId> last;  // records come in runs of one job: look each job up once
  bool endpoints = false;
  for (records::TaskRecord& r : tasks) {
    if (r.state != TaskState::kLaunching && r.state != TaskState::kRunning) continue;
    if (r.id.job != last) {
      last = r.id.job;
      const jobmgr::Job* job = jobs_.GetJob(r.id.job);
      endpoints = job != nullptr && HasEndpoints(job->spec().type);
    }
    if (!endpoints) continue;
    r.ports.clear();
    if (const placement::Usage* u = snapshot_.TaskUsage(r.id)) {
      for (uint32_t port : u->ports()) r.ports.push_back(static_cast<uint16_t>(port));
    } else if (auto p = placed.find(r.id); p != placed.end()) {
      for (const auto& [name, port] : p->second->ports)
        r.ports.push_back(static_cast<uint16_t>(port));
    }
  }
}

std::shared_ptr<const std::vector<GangPeer>> Absorber::PeersOf(TaskId task, uint32_t gang_size,
                                                               const PlacedNow& placed,
                                                               PeerCache& cache) const {
  const jobmgr::Job* job = jobs_.GetJob(task.job);
  if (job == nullptr || gang_size < 2) return nullptr;
  const uint32_t first = task.instance / gang_size * gang_size;
  const uint32_t end = std::min(first + gang_size, job->instances());
  if (end - first < 2) return nullptr;  // a last gang of one
  auto [it, missing] = cache.try_emplace(std::make_pair(task.job, first));
  if (!missing) return it->second;
  auto list = std::make_shared<std::vector<GangPeer>>();
  for (uint32_t i = first; i < end; ++i) {
    const TaskId member{task.job, i};
    GangPeer p;
    p.instance = i;
    if (const RoleSpec* role = job->spec().RoleOf(i)) p.role = role->name;
    if (auto a = placed.find(member); a != placed.end()) {
      p.host = a->second->host;
      p.ports = a->second->ports;
    } else {
      // Not placed now: a member whose run is live where the job manager records it, with the
      // ports it holds there. Members without a live run (waiting, being stopped) are left out.
      const jobmgr::TaskRuntime& t = job->task(i);
      if ((t.state != TaskState::kLaunching && t.state != TaskState::kRunning) ||
          t.host == jobmgr::kNoHost) {
        continue;
      }
      p.host = jobs_.HostName(t.host);
      if (const placement::Usage* u = snapshot_.TaskUsage(member)) {
        const std::vector<std::string> names = job->TaskFor(i)->ports;
        for (size_t k = 0; k < u->ports().size() && k < names.size(); ++k) {
          p.ports.emplace_back(names[k], u->ports()[k]);
        }
      }
    }
    list->push_back(std::move(p));
  }
  it->second = std::move(list);
  return it->second;
}

void Absorber::ReleaseTask(TaskId task) {
  (void)snapshot_.Release(task);
  usage_.Forget(task);
  (void)rm_.Release(task);  // NOT_FOUND: it held nothing
}

}  // namespace paceline::scheduler
