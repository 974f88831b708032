#pragma once
// The commands that run Paceline's processes and tools, as opposed to the client commands of
// src/cli: `master`, `agent`, `up` (daemon_commands.cc), `sim` (sim_command.cc), `bench`
// (bench_command.cc) and `store` (store_command.cc). main.cc hands them to the command line
// with the client commands, so that the CLI's own library links only the generated client,
// common and spec.
//
// Thread-safety: registration and the callbacks run on the main thread.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/context.h"

namespace paceline::cli {

void RegisterDaemonCommands(CLI::App& app, CommandContext& ctx);    // master, agent, up
void RegisterSimCommand(CLI::App& app, CommandContext& ctx);        // sim
void RegisterBenchCommand(CLI::App& app, CommandContext& ctx);      // bench api|scale|fleet
void RegisterFleetBench(CLI::App* bench, CommandContext& ctx);      // bench fleet
void RegisterRetentionBench(CLI::App* bench, CommandContext& ctx);  // bench retention
void RegisterContainerBench(CLI::App* bench, CommandContext& ctx);  // bench containers
void RegisterStoreCommands(CLI::App& app, CommandContext& ctx);     // store migrate
void RegisterSecretKeyCommand(CLI::App& app, CommandContext& ctx);  // secret new-key
void RegisterImageCommands(CLI::App& app, CommandContext& ctx);     // image load|list
void RegisterJoinCommand(CLI::App* agent, CommandContext& ctx);     // agent join|renew

// A benchmark's JSON report, with the machine added: written to `file` when given, and printed
// when the user asked for -o json (then it returns true: the table is not wanted).
bool EmitBenchReport(CommandContext& ctx, nlohmann::json report, const std::string& file);

}  // namespace paceline::cli
