// Daemon and tool commands: master, agent, up, sim, bench.

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/context.h"

namespace paceline::cli {

void RegisterDaemonCommands(CLI::App& app, CommandContext& ctx) {
  for (const char* sub : {"master", "agent", "up"}) {
    CLI::App* c = app.add_subcommand(sub, sub);
    c->allow_extras();
    c->callback([&ctx] { ctx.Fail(absl::UnimplementedError("not yet")); });
  }
}

void RegisterToolCommands(CLI::App& app, CommandContext& ctx) {
  for (const char* sub : {"sim", "bench"}) {
    CLI::App* c = app.add_subcommand(sub, sub);
    c->allow_extras();
    c->callback([&ctx] { ctx.Fail(absl::UnimplementedError("not yet")); });
  }
}

}  // namespace paceline::cli
