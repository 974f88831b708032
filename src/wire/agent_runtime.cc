#include "wire/agent_runtime.h"

#include "wire/core.h"

namespace paceline::wire {

// The master's view of a runtime event.
v1::TaskStatusUpdate ToStatusUpdate(const agent::TaskEvent& e) {
  v1::TaskStatusUpdate u;
  u.set_seq(e.seq);
  *u.mutable_run() = ToProto(e.run);
  u.set_at_unix_ms(absl::ToUnixMillis(e.time));
  u.set_message(e.message);
  u.set_exit_code(e.exit_code.value_or(-1));
  u.set_signal(e.signal.value_or(0));
  using agent::TaskEventType;
  using agent::TerminationReason;
  switch (e.type) {
    case TaskEventType::kRunning:
      u.set_state(v1::Task::RUNNING);
      break;
    case TaskEventType::kHealth:
      u.set_state(v1::Task::RUNNING);
      u.set_reason(std::string(agent::HealthStateName(e.health)));
      break;
    case TaskEventType::kReadiness:  // the master's readiness of the run: READY or NOT_READY
      u.set_state(v1::Task::RUNNING);
      u.set_reason(std::string(agent::ReadinessStateName(e.readiness)));
      break;
    case TaskEventType::kExited:
      if (e.reason == TerminationReason::kExited && e.exit_code.value_or(-1) == 0) {
        u.set_state(v1::Task::SUCCEEDED);
      } else {
        u.set_state(v1::Task::FAILED);
        u.set_reason(e.reason == TerminationReason::kOomKilled  ? "OOM_KILLED"
                     : e.reason == TerminationReason::kSignaled ? "SIGNALED"
                                                                : "EXIT_NONZERO");
      }
      break;
    case TaskEventType::kKilled:
      u.set_state(v1::Task::KILLED);
      u.set_reason(std::string(agent::TerminationReasonName(e.reason)));
      break;
    case TaskEventType::kFailed:
      u.set_state(v1::Task::FAILED);
      u.set_reason("LAUNCH_FAILED");
      break;
    case TaskEventType::kLost:
      u.set_state(v1::Task::LOST);
      break;
  }
  return u;
}

absl::StatusOr<agent::LaunchRequest> FromLaunch(const v1::LaunchTask& l) {
  agent::LaunchRequest req;
  req.run = FromProto(l.run());
  absl::StatusOr<TaskSpec> spec = FromLaunchSpec(l.task());
  if (!spec.ok()) return spec.status();
  req.spec = *std::move(spec);
  for (const auto& [name, port] : l.ports()) req.ports[name] = static_cast<uint16_t>(port);
  for (uint32_t d : l.gpu_devices()) req.gpu_devices.push_back(static_cast<int>(d));
  for (const auto& [name, value] : l.secret_values()) req.secret_values[name] = value;
  req.secret_error = l.secret_error();
  req.task_token = l.credential().token();
  if (l.peers_size() > 0) {
    req.peers.emplace();
    for (const v1::GangPeer& p : l.peers()) {
      agent::GangPeer& peer = (*req.peers)[p.instance()];
      peer.host = p.host();
      peer.address = p.address();
      for (const auto& [name, port] : p.ports()) peer.ports[name] = static_cast<uint16_t>(port);
      peer.role = p.role();
    }
  }
  if (l.has_rendezvous()) {
    if (!req.peers) {
      return absl::InvalidArgumentError(
          "launch.rendezvous: set on a launch without peers; expected it only on a gang's");
    }
    std::optional<Rendezvous> kind = RendezvousFromName(l.rendezvous().kind());
    if (!kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("launch.rendezvous.kind: '", l.rendezvous().kind(),
                       "'; expected none, pytorch, mpi or tensorflow"));
    }
    req.rendezvous =
        agent::GangRendezvousRequest{*kind, l.rendezvous().port(), l.rendezvous().attempt()};
  }
  req.role = l.role();
  return req;
}

v1::AgentMessage ToUsageMessage(const agent::UsageReport& r, absl::Duration interval) {
  v1::AgentMessage msg;
  v1::AgentUsage* u = msg.mutable_usage();
  u->set_at_unix_ms(absl::ToUnixMillis(r.time));
  u->set_interval_ms(absl::ToInt64Milliseconds(interval));
  u->set_host_cpu_milli(r.host_cpu_milli);
  u->set_host_memory_used_bytes(r.host_memory_used_bytes);
  u->set_host_memory_total_bytes(r.host_memory_total_bytes);
  for (const agent::RunUsageRate& run : r.runs) {
    v1::RunUsage* ru = u->add_runs();
    *ru->mutable_run() = ToProto(run.run);
    ru->set_cpu_milli(run.cpu_milli);
    ru->set_memory_bytes(run.memory_bytes);
  }
  return msg;
}

void ToProto(const std::vector<agent::GpuFault>& faults,
             google::protobuf::RepeatedPtrField<v1::GpuFault>* out) {
  for (const agent::GpuFault& f : faults) {
    v1::GpuFault* p = out->Add();
    p->set_device(static_cast<uint32_t>(f.device));
    p->set_reason(f.reason);
    p->set_since_unix_ms(absl::ToUnixMillis(f.since));
  }
}

}  // namespace paceline::wire
