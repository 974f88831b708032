// The one `main` of Paceline: every daemon, tool and client command is a subcommand of this
// binary. The client commands come with the command line (src/cli); the daemons and tools are
// added here (src/main/commands.h), which is the only place that links them all.
#include "cli/cli.h"
#include "main/commands.h"

int main(int argc, char** argv) {
  using namespace paceline::cli;
  return RunCli(
      argc, argv,
      {RegisterDaemonCommands, RegisterSimCommand, RegisterBenchCommand, RegisterStoreCommands});
}
