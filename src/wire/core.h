#pragma once
// Wire core: conversions between the domain's basic types (common/, spec/) and the protobuf
// messages of the API and of the agent protocol. The one place where a proto message and a
// domain value meet for these types; the core never sees protobuf. Both the master and the
// agent link this part (it depends only on common, the spec model and the generated protos).
//
// From* functions validate what they read from the wire where it can be wrong and say which
// field is; To* functions cannot fail.
//
// Thread-safety: pure functions.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "common/task_state.h"
#include "paceline/v1/common.pb.h"
#include "paceline/v1/host.pb.h"
#include "spec/job_spec.h"

namespace paceline::wire {

v1::Resources ToProto(const Resources& r);
Resources FromProto(const v1::Resources& r);

v1::RunRef ToProto(const RunId& run);
RunId FromProto(const v1::RunRef& run);

// Milliseconds since the Unix epoch; 0 for absl::InfinitePast() ("never").
int64_t ToUnixMillis(absl::Time t);

v1::Task::State ToProto(TaskState s);
// INVALID_ARGUMENT naming `field` for STATE_UNSPECIFIED or a value this build does not know.
absl::StatusOr<TaskState> FromProto(v1::Task::State s, absl::string_view field);

// The part of a task spec an agent needs to run an instance (command, resources, ports, env,
// health check, volume, kill grace, user); placement-only fields (constraints, GPU models,
// restart policy) stay with the master.
v1::TaskLaunchSpec ToLaunchSpec(const TaskSpec& task);
// The inverse; INVALID_ARGUMENT naming the field for a negative duration or size.
absl::StatusOr<TaskSpec> FromLaunchSpec(const v1::TaskLaunchSpec& spec);

}  // namespace paceline::wire
