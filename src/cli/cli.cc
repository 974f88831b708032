#include "cli/cli.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/archive_commands.h"
#include "cli/context.h"
#include "cli/peloton_commands.h"
#include "cli/reference.h"
#include "cli/usage_command.h"
#include "common/version.h"

namespace paceline::cli {

void CommandContext::Fail(const absl::Status& status) {
  std::cerr << "error: " << status.message() << std::endl;
  exit_code = 1;
}

CLI::App* AddGroup(CLI::App& app, const char* name, const char* help) {
  for (CLI::App* existing : app.get_subcommands([](CLI::App*) { return true; })) {
    if (existing->get_name() == name) return existing;  // a command of src/main joined it
  }
  CLI::App* group = app.add_subcommand(name, help);
  group->require_subcommand(1);
  return group;
}

absl::Status WithFlag(const absl::Status& s, absl::string_view flag) {
  return absl::Status(s.code(), absl::StrCat(flag, ": ", s.message()));
}

int RunCli(int argc, char** argv, std::initializer_list<Registrar> more) {
  CLI::App app{"Paceline: one scheduler for batch jobs, services, stateful jobs and daemons."};
  app.name("paceline");
  app.set_version_flag("--version",
                       absl::StrCat("paceline ", Version(), " (commit ", Commit(), ")"));
  app.require_subcommand(1);
  app.fallthrough();

  CommandContext ctx;
  app.add_option("--addr", ctx.client.addr,
                 "master address host:port, or several separated by commas, tried in turn: "
                 "writes go to the leader, reads to any (--reads) (default: $PACELINE_ADDR, "
                 "~/.paceline/config)");
  app.add_option("--reads", ctx.client.reads,
                 "with several masters: spread (reads go to any master, a standby answering "
                 "from its copy of the store, which reflects this client's writes) or leader")
      ->check(CLI::IsMember({"spread", "leader"}))
      ->capture_default_str();
  app.add_option("--timeout", ctx.client.timeout,
                 "give up on the master after this long, retries included (waits and watches: "
                 "the longest outage they ride through)")
      ->capture_default_str();
  app.add_option("--token", ctx.client.token,
                 "API token (default: $PACELINE_TOKEN, the file $PACELINE_TASK_TOKEN_FILE, "
                 "~/.paceline/config)");
  app.add_option("--ca", ctx.client.ca,
                 "the cluster's CA, to verify the master (default: $PACELINE_CA, "
                 "~/.paceline/config, ./data/tls/ca.pem; none: plain text)");
  app.add_option("-o,--output", ctx.client.output,
                 "output format of client commands: table (default), json or yaml; csv for "
                 "`usage` (the others print their table)")
      ->check(CLI::IsMember({"table", "json", "yaml", "csv"}));

  CLI::App* help = app.add_subcommand("help", "show this help");
  help->callback([&app] {
    std::cout << app.get_formatter()->make_help(&app, "paceline", CLI::AppFormatMode::Normal);
  });

  for (Registrar r : more) r(app, ctx);
  RegisterInfoCommand(app, ctx);
  RegisterVersionCommand(app, ctx);
  RegisterPoolCommands(app, ctx);
  RegisterJobCommands(app, ctx);
  RegisterUpdateCommands(app, ctx);
  RegisterTaskCommands(app, ctx);
  RegisterHostCommands(app, ctx);
  RegisterAccessCommands(app, ctx);
  RegisterSecretCommands(app, ctx);
  RegisterHistoryCommands(app, ctx);
  RegisterUsageCommand(app, ctx);
  RegisterConvertCommand(app, ctx);
  RegisterReferenceCommands(app, ctx.exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return ctx.exit_code;
}

}  // namespace paceline::cli
