#pragma once
// `paceline task exec JOB/INSTANCE [-i] [-t] -- COMMAND...` (exec_command.cc).

#include "cli/context.h"

namespace paceline::cli {

// Adds `exec` to the `task` group.
void AddTaskExecCommand(CLI::App& task, CommandContext& ctx);

}  // namespace paceline::cli
