// Client command groups that talk to the master's API: pool, job, task, host.
// The API arrives with the master; until then only the offline commands (validate) work and
// the others say so.

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/context.h"

namespace paceline::cli {
namespace {

void NotYet(CLI::App* cmd, CommandContext& ctx, std::string what) {
  cmd->callback([&ctx, what] {
    ctx.Fail(absl::UnimplementedError(
        absl::StrCat("'paceline ", what, "' needs the master API, which this version lacks")));
  });
}

}  // namespace

void RegisterPoolCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* pool = app.add_subcommand("pool", "manage resource pools");
  pool->require_subcommand(1);
  for (const char* sub : {"create", "get", "list", "update", "delete"}) {
    CLI::App* c = pool->add_subcommand(sub, absl::StrCat(sub, " resource pools"));
    c->allow_extras();
    NotYet(c, ctx, absl::StrCat("pool ", sub));
  }
  AddPoolValidateCommand(*pool, ctx);
}

void RegisterJobCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* job = app.add_subcommand("job", "submit and manage jobs");
  job->require_subcommand(1);
  for (const char* sub : {"create", "get", "list", "kill", "delete", "restart", "wait"}) {
    CLI::App* c = job->add_subcommand(sub, absl::StrCat(sub, " jobs"));
    c->allow_extras();
    NotYet(c, ctx, absl::StrCat("job ", sub));
  }
  AddJobValidateCommand(*job, ctx);
}

void RegisterTaskCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* task = app.add_subcommand("task", "inspect tasks (job instances)");
  task->require_subcommand(1);
  for (const char* sub : {"list", "get", "events", "logs"}) {
    CLI::App* c = task->add_subcommand(sub, absl::StrCat(sub, " tasks"));
    c->allow_extras();
    NotYet(c, ctx, absl::StrCat("task ", sub));
  }
}

void RegisterHostCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* host = app.add_subcommand("host", "inspect and maintain hosts");
  host->require_subcommand(1);
  CLI::App* c = host->add_subcommand("list", "list hosts");
  c->allow_extras();
  NotYet(c, ctx, "host list");
}

}  // namespace paceline::cli
