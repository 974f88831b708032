#include "master/proto_convert.h"

namespace paceline::master {

v1::Resources ToProto(const Resources& r) {
  v1::Resources p;
  p.set_cpu_milli(r.cpu_milli());
  p.set_memory_bytes(r.memory_bytes());
  p.set_disk_bytes(r.disk_bytes());
  p.set_gpu_milli(r.gpu_milli());
  return p;
}

Resources FromProto(const v1::Resources& r) {
  return Resources::Of(r.cpu_milli(), r.memory_bytes(), r.disk_bytes(), r.gpu_milli());
}

v1::RunRef ToProto(const RunId& run) {
  v1::RunRef p;
  p.set_job_id(run.task.job.value());
  p.set_instance(run.task.instance);
  p.set_run(run.run);
  return p;
}

RunId FromProto(const v1::RunRef& run) {
  return RunId{TaskId{JobId(run.job_id()), run.instance()}, run.run()};
}

int64_t ToUnixMillis(absl::Time t) { return t == absl::InfinitePast() ? 0 : absl::ToUnixMillis(t); }

v1::MasterMessage ToLaunchMessage(const scheduler::Launch& launch,
                                  const std::string& job_spec_yaml) {
  v1::MasterMessage m;
  v1::LaunchTask* l = m.mutable_launch();
  *l->mutable_run() = ToProto(launch.run);
  l->set_spec_yaml(job_spec_yaml);
  for (const auto& [name, port] : launch.ports) (*l->mutable_ports())[name] = port;
  for (uint32_t d : launch.gpu_devices) l->add_gpu_devices(d);
  if (launch.peers) {
    for (const scheduler::GangPeer& p : *launch.peers) {
      v1::GangPeer* peer = l->add_peers();
      peer->set_instance(p.instance);
      peer->set_host(p.host);
      for (const auto& [name, port] : p.ports) (*peer->mutable_ports())[name] = port;
    }
  }
  return m;
}

v1::MasterMessage ToKillMessage(const jobmgr::KillCommand& kill) {
  v1::MasterMessage m;
  v1::KillTask* k = m.mutable_kill();
  *k->mutable_run() = ToProto(kill.run);
  k->set_grace_ms(absl::ToInt64Milliseconds(kill.grace));
  k->set_reason(std::string(jobmgr::TaskReasonName(kill.reason)));
  return m;
}

v1::TaskEvent ToProto(const records::TaskEvent& e) {
  v1::TaskEvent p;
  p.set_run(e.run.run);
  p.set_at_unix_ms(master::ToUnixMillis(e.at));
  p.set_state(std::string(TaskStateName(e.state)));
  p.set_host(e.host);
  p.set_reason(e.reason);
  p.set_message(e.message);
  return p;
}

}  // namespace paceline::master
