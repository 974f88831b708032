#include "wire/agent_protocol.h"

#include "spec/image_ref.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "wire/core.h"

namespace paceline::wire {

scheduler::HostRegistration RegistrationOf(const v1::AgentRegister& r) {
  scheduler::HostRegistration reg;
  reg.name = r.host();
  reg.capacity = FromProto(r.capacity());
  reg.gpu_models.assign(r.gpu_models().begin(), r.gpu_models().end());
  for (const auto& [k, v] : r.labels()) reg.labels.emplace_back(k, v);
  std::sort(reg.labels.begin(), reg.labels.end());
  for (const v1::PortRange& p : r.ports()) reg.ports.push_back({p.first(), p.last()});
  return reg;
}

std::vector<scheduler::ReportedRun> RunsOf(const v1::AgentRegister& r) {
  std::vector<scheduler::ReportedRun> running;
  running.reserve(r.running_size());
  for (const v1::RunningTask& t : r.running()) {
    scheduler::ReportedRun run;
    run.run = FromProto(t.run());
    for (const auto& [name, port] : t.ports()) run.ports.emplace_back(name, port);
    run.gpu_devices.assign(t.gpu_devices().begin(), t.gpu_devices().end());
    running.push_back(std::move(run));
  }
  return running;
}

std::vector<hostmgr::GpuFault> GpuFaultsOf(
    const google::protobuf::RepeatedPtrField<v1::GpuFault>& faults) {
  std::vector<hostmgr::GpuFault> out;
  out.reserve(faults.size());
  for (const v1::GpuFault& f : faults) {
    out.push_back({f.device(), f.reason(), absl::FromUnixMillis(f.since_unix_ms())});
  }
  return out;
}

std::pair<scheduler::HostUsageSample, std::vector<scheduler::ReportedUsage>> UsageOf(
    const v1::AgentUsage& u) {
  scheduler::HostUsageSample sample;
  sample.used = Resources::Of(u.host_cpu_milli(), u.host_memory_used_bytes());
  sample.memory_total_bytes = u.host_memory_total_bytes();
  sample.interval = absl::Milliseconds(std::max<int64_t>(100, u.interval_ms()));
  std::vector<scheduler::ReportedUsage> runs;
  runs.reserve(u.runs_size());
  for (const v1::RunUsage& r : u.runs()) {
    runs.push_back({FromProto(r.run()), Resources::Of(r.cpu_milli(), r.memory_bytes())});
  }
  if (u.has_images()) {
    // References an agent sends are canonical; anything else would never match a task's.
    sample.images.emplace();
    for (const v1::HostImage& img : u.images().images()) {
      scheduler::HostImage h;
      h.config_digest = img.config_digest();
      for (const std::string& ref : img.refs()) {
        absl::StatusOr<spec::ImageRef> parsed = spec::ParseImageRef(ref);
        if (parsed.ok() && parsed->ToString() == ref) h.refs.push_back(ref);
      }
      h.size_bytes = std::max<int64_t>(0, img.size_bytes());
      if (img.last_used_unix_ms() > 0) h.last_used = absl::FromUnixMillis(img.last_used_unix_ms());
      h.tasks = img.tasks();
      sample.images->push_back(std::move(h));
    }
  }
  return {sample, std::move(runs)};
}

absl::StatusOr<jobmgr::StatusReport> StatusReportOf(const v1::TaskStatusUpdate& u,
                                                    const std::string& host) {
  absl::StatusOr<TaskState> state = FromProto(u.state(), "status.state");
  if (!state.ok()) return state.status();
  if (*state != TaskState::kRunning && !IsTerminal(*state)) {
    return absl::InvalidArgumentError(absl::StrCat("status.state: ", TaskStateName(*state),
                                                   "; expected RUNNING, SUCCEEDED, FAILED, KILLED "
                                                   "or LOST"));
  }
  jobmgr::StatusReport report;
  report.run = FromProto(u.run());
  report.host = host;
  report.state = *state;
  report.exit_code = u.exit_code();
  report.signal = u.signal();
  report.reason = jobmgr::TaskReasonFromName(u.reason()).value_or(jobmgr::TaskReason::kNone);
  report.message = u.message();
  return report;
}

v1::MasterMessage ToLaunchMessage(const scheduler::Launch& launch) {
  v1::MasterMessage m;
  v1::LaunchTask* l = m.mutable_launch();
  *l->mutable_run() = ToProto(launch.run);
  *l->mutable_task() = ToLaunchSpec(*launch.task);
  for (const auto& [name, port] : launch.ports) (*l->mutable_ports())[name] = port;
  for (uint32_t d : launch.gpu_devices) l->add_gpu_devices(d);
  if (launch.peers) {
    for (const scheduler::GangPeer& p : *launch.peers) {
      v1::GangPeer* peer = l->add_peers();
      peer->set_instance(p.instance);
      peer->set_host(p.host);
      for (const auto& [name, port] : p.ports) (*peer->mutable_ports())[name] = port;
      peer->set_role(p.role);
    }
    // A gang always learns its attempt; the kind says which convention the agent writes.
    v1::GangRendezvous* r = l->mutable_rendezvous();
    r->set_kind(std::string(RendezvousName(launch.rendezvous)));
    r->set_port(launch.rendezvous_port);
    r->set_attempt(launch.gang_attempt);
  }
  l->set_role(launch.role);
  return m;
}

v1::MasterMessage ToKillMessage(const jobmgr::KillCommand& kill) {
  v1::MasterMessage m;
  v1::KillTask* k = m.mutable_kill();
  *k->mutable_run() = ToProto(kill.run);
  k->set_grace_ms(absl::ToInt64Milliseconds(kill.grace));
  k->set_reason(std::string(jobmgr::TaskReasonName(kill.reason)));
  k->set_deregistration_delay_ms(absl::ToInt64Milliseconds(kill.deregistration_delay));
  return m;
}

}  // namespace paceline::wire
