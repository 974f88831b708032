#pragma once
// `paceline sim`: the simulator's command line (sim_command.cc; docs/sim.md).

#include "cli/context.h"

namespace paceline::cli {

void RegisterSimCommand(CLI::App& app, CommandContext& ctx);

}  // namespace paceline::cli
