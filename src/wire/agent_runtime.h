#pragma once
// The agent's side of the agent protocol on the wire (proto/paceline/v1/host.proto): the
// runtime's events as status updates, a launch message as the runtime's LaunchRequest, and the
// usage sampler's report as a usage message, and the host's unhealthy GPUs. The master's side is in
// wire/agent_protocol.h. Only the agent links this part; it depends on the agent runtime, never on
// the scheduler.
//
// Thread-safety: pure functions.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/base/launch_request.h"
#include "agent/base/task_event.h"
#include "agent/devices/nvml.h"
#include "agent/host/usage_sampler.h"
#include "paceline/v1/host.pb.h"

namespace paceline::wire {

// The master's view of a runtime event: RUNNING (also for a health change, with the health as
// its reason, and a readiness change, with READY or NOT_READY as its reason), SUCCEEDED, FAILED
// (with OOM_KILLED, SIGNALED, EXIT_NONZERO or LAUNCH_FAILED), KILLED or LOST.
v1::TaskStatusUpdate ToStatusUpdate(const agent::TaskEvent& e);

// INVALID_ARGUMENT naming the field when the launch's task spec is malformed.
absl::StatusOr<agent::LaunchRequest> FromLaunch(const v1::LaunchTask& l);

v1::AgentMessage ToUsageMessage(const agent::UsageReport& r, absl::Duration interval);

// The host's unhealthy GPU devices (devices/nvml.h), for a registration or a gpu_health message.
void ToProto(const std::vector<agent::GpuFault>& faults,
             google::protobuf::RepeatedPtrField<v1::GpuFault>* out);

}  // namespace paceline::wire
