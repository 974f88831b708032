// The one `main` of Paceline: every daemon, tool and client command is a subcommand of this
// binary (see src/cli/cli.h).

#include "cli/cli.h"

int main(int argc, char** argv) { return paceline::cli::RunCli(argc, argv); }
