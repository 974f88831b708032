#pragma once
// `paceline usage`: what the runs of pools' jobs held over a time range (docs/cli.md), summed
// by pool, user, job or owner (PoolService.GetUsage), as a table, JSON (-o json), YAML or CSV
// (-o csv).
//
// Thread-safety: like every command, single-threaded.

#include "CLI/CLI.hpp"
#include "cli/context.h"

namespace paceline::cli {

void RegisterUsageCommand(CLI::App& app, CommandContext& ctx);  // usage

}  // namespace paceline::cli
