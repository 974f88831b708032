// The one `main` of Paceline: every daemon, tool and client command is a subcommand of this
// binary. The client commands come with the command line (src/cli); the daemons and tools are
// added here (src/main/commands.h), which is the only place that links them all.
#include "absl/synchronization/mutex.h"
#include "cli/cli.h"
#include "main/commands.h"

int main(int argc, char** argv) {
  using namespace paceline::cli;
  // The system's Abseil is built with its mutex deadlock detection on: a graph of every lock
  // order, consulted on every lock. The sanitizer and unit test builds keep it; the binary does
  // not pay for it on every API call.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return RunCli(argc, argv,
                {RegisterDaemonCommands, RegisterSimCommand, RegisterBenchCommand,
                 RegisterStoreCommands, RegisterSecretKeyCommand, RegisterImageCommands});
}
