#include "wire/job_info.h"

#include "wire/core.h"

namespace paceline::wire {

v1::Update::State ToProto(records::UpdateState s) {
  switch (s) {
    case records::UpdateState::kRollingForward:
      return v1::Update::ROLLING_FORWARD;
    case records::UpdateState::kRollingBack:
      return v1::Update::ROLLING_BACK;
    case records::UpdateState::kSucceeded:
      return v1::Update::SUCCEEDED;
    case records::UpdateState::kFailed:
      return v1::Update::FAILED;
    case records::UpdateState::kRolledBack:
      return v1::Update::ROLLED_BACK;
    case records::UpdateState::kAborted:
      return v1::Update::ABORTED;
  }
  return v1::Update::STATE_UNSPECIFIED;
}

v1::UpdateInfo UpdateInfoOf(JobId job, const records::UpdateRecord& u) {
  v1::UpdateInfo info;
  info.set_job_id(job.value());
  info.set_id(u.id);
  info.set_state(ToProto(u.state));
  info.set_paused(u.paused);
  info.set_from_version(u.from_version);
  info.set_to_version(u.to_version);
  info.set_batch_size(u.options.batch_size);
  info.set_max_failures(u.options.max_failures);
  info.set_rollback_on_failure(u.options.rollback_on_failure);
  info.set_in_place(u.options.in_place);
  info.set_min_healthy_time_ms(absl::ToInt64Milliseconds(u.options.min_healthy_time));
  info.set_total(static_cast<uint32_t>(u.instances.size()));
  for (size_t k = 0; k < u.instances.size(); ++k) {
    switch (u.progress[k]) {
      case records::EntryProgress::kDone:
        info.set_done(info.done() + 1);
        break;
      case records::EntryProgress::kInFlight:
        info.set_in_flight(info.in_flight() + 1);
        break;
      case records::EntryProgress::kFailed:
        info.set_failed(info.failed() + 1);
        info.add_failed_instances(u.instances[k]);
        break;
      case records::EntryProgress::kWaiting:
        break;
    }
  }
  info.set_from_instances(u.from_instances);
  info.set_to_instances(u.to_instances);
  info.set_started_at_unix_ms(wire::ToUnixMillis(u.started_at));
  info.set_finished_at_unix_ms(wire::ToUnixMillis(u.finished_at));
  info.set_message(u.message);
  return info;
}

void SetRolesAndGang(const JobSpec& spec, v1::GetJobResponse& resp) {
  uint32_t first = 0;
  for (const RoleSpec& role : spec.roles) {
    v1::JobRole* r = resp.add_roles();
    r->set_name(role.name);
    r->set_instances(role.instances);
    r->set_first_instance(first);
    first += role.instances;
  }
  if (spec.sla.min_running_instances > 1) {
    v1::JobGang* g = resp.mutable_gang();
    g->set_size(spec.sla.min_running_instances);
    g->set_rendezvous(std::string(RendezvousName(spec.gang.rendezvous)));
    g->set_restart(std::string(GangRestartName(spec.gang.restart)));
    g->set_max_restarts(spec.gang.max_restarts);
  }
  if (spec.type == JobType::kBatch)
    resp.set_completion(std::string(CompletionName(spec.completion)));
}

}  // namespace paceline::wire
