#pragma once
// The `paceline` command line: builds the CLI11 command tree, parses argv, runs one command.
// Flags are parsed only here; commands receive plain config structs.
//
// Exit codes: 0 success; 1 the command failed (message on stderr); 2 bad usage.

#include <initializer_list>

#include "cli/context.h"

namespace paceline::cli {

// Adds one group of commands to the command line.
using Registrar = void (*)(CLI::App& app, CommandContext& ctx);

// Runs the command line: the client commands, plus the groups in `more` (the daemons and tools,
// which main.cc adds; see main/commands.h).
int RunCli(int argc, char** argv, std::initializer_list<Registrar> more);

}  // namespace paceline::cli
