#pragma once
// The `paceline` command line: builds the CLI11 command tree, parses argv, runs one command.
// Flags are parsed only here; commands receive plain config structs.
//
// Exit codes: 0 success; 1 the command failed (message on stderr); 2 bad usage.

namespace paceline::cli {

int RunCli(int argc, char** argv);

}  // namespace paceline::cli
