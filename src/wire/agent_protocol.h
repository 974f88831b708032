#pragma once
// The master's side of the agent protocol on the wire (proto/paceline/v1/host.proto): what an
// agent's messages mean to the scheduler core, and the launch and kill messages built from the
// core's Actions. The agent's side is in wire/agent_runtime.h.
//
// A launch carries the instance's effective task spec as the master parsed it at job
// creation (ToLaunchSpec), never the job's YAML: a spec is parsed once.
//
// Thread-safety: pure functions.

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"
#include "paceline/v1/host.pb.h"
#include "records/records.h"
#include "scheduler/actions.h"
#include "scheduler/scheduler_core.h"

namespace paceline::wire {

scheduler::HostRegistration RegistrationOf(const v1::AgentRegister& r);
std::vector<scheduler::ReportedRun> RunsOf(const v1::AgentRegister& r);
std::pair<scheduler::HostUsageSample, std::vector<scheduler::ReportedUsage>> UsageOf(
    const v1::AgentUsage& u);
// An agent's unhealthy GPU devices (AgentRegister.gpu_faults, GpuHealth.faults).
std::vector<hostmgr::GpuFault> GpuFaultsOf(
    const google::protobuf::RepeatedPtrField<v1::GpuFault>& faults);
// INVALID_ARGUMENT when the state is not one an agent reports (RUNNING or terminal).
absl::StatusOr<jobmgr::StatusReport> StatusReportOf(const v1::TaskStatusUpdate& u,
                                                    const std::string& host);

v1::MasterMessage ToLaunchMessage(const scheduler::Launch& launch);
v1::MasterMessage ToKillMessage(const jobmgr::KillCommand& kill);

}  // namespace paceline::wire
