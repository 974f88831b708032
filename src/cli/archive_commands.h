#pragma once
// The archive of retired jobs, from the command line: `job get --archived ID` (the job as the
// archive holds it) and `history query` (the jobs that finished in a time range in a pool's
// subtree). The master answers from its archive (JobService.GetArchivedJob, QueryArchive).
//
// Thread-safety: like every command, single-threaded.

#include <cstdint>

#include "CLI/CLI.hpp"
#include "cli/context.h"

namespace paceline::cli {

// Prints archived job `id` (-o json|yaml: the archive's document).
void ShowArchivedJob(CommandContext& ctx, uint64_t id);
void RegisterHistoryCommands(CLI::App& app, CommandContext& ctx);  // history ...

}  // namespace paceline::cli
