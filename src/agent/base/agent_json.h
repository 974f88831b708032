#pragma once
// JSON forms of the agent's durable records: the checkpoint record of a run (RunContext, with
// the parts of its LaunchRequest the agent uses) and a TaskEvent (the outbox). One line of JSON
// per record; parsing rejects malformed input with InvalidArgument (never throws).
//
// Thread-safety: pure functions.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/base/run_context.h"
#include "agent/base/task_event.h"

namespace paceline::agent {

std::string RunContextToJson(const RunContext& ctx);
absl::StatusOr<RunContext> RunContextFromJson(absl::string_view text);

std::string TaskEventToJson(const TaskEvent& e);
absl::StatusOr<TaskEvent> TaskEventFromJson(absl::string_view text);

}  // namespace paceline::agent
