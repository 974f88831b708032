#pragma once
// CommandContext: what every subcommand shares — the global client flags and the exit code the
// chosen command sets. Each command group registers itself with a Register*Commands function.
//
// Thread-safety: used by the main thread only.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spec/job_spec.h"

namespace CLI {
class App;
}

namespace paceline::cli {

enum class OutputFormat { kTable, kJson, kYaml };

struct ClientFlags {
  // Master gRPC address, or several separated by commas; empty = from $PACELINE_ADDR or
  // ~/.paceline/config (cli/client_config.h).
  std::string addr;
  std::string token;  // bearer token; empty = from $PACELINE_TOKEN or ~/.paceline/config
  std::string ca;  // the cluster's CA file (TLS); empty = from $PACELINE_CA, ... (client_config.h)
  // How long a client command may take, its retries included; for commands that run until
  // something happens (`job watch`, `task logs -f`, a wait without its own --timeout), how long
  // the master may stay out of reach (cli/rpc.h).
  std::string timeout = "30s";
  // With several masters: "spread" sends each command's reads to one of them picked at
  // random (a standby answers from its copy of the store), "leader" where the writes go.
  std::string reads = "spread";
  std::string output = "table";
  OutputFormat format() const {
    return output == "json"   ? OutputFormat::kJson
           : output == "yaml" ? OutputFormat::kYaml
                              : OutputFormat::kTable;
  }
};

struct CommandContext {
  ClientFlags client;
  int exit_code = 0;
  // Prints "error: <message>" to stderr and sets a failing exit code.
  void Fail(const absl::Status& status);
};

// A command group (`paceline pool ...`): a subcommand that needs one of its own.
// The group `name` (made on first use: the daemons' registrars may add to a client group).
CLI::App* AddGroup(CLI::App& app, const char* name, const char* help);

// The same status, its message prefixed with the flag that caused it.
absl::Status WithFlag(const absl::Status& s, absl::string_view flag);

void RegisterInfoCommand(CLI::App& app, CommandContext& ctx);     // info
void RegisterVersionCommand(CLI::App& app, CommandContext& ctx);  // version
void RegisterPoolCommands(CLI::App& app, CommandContext& ctx);    // pool ...
void RegisterJobCommands(CLI::App& app, CommandContext& ctx);     // job ...
void RegisterTaskCommands(CLI::App& app, CommandContext& ctx);    // task ...
void RegisterHostCommands(CLI::App& app, CommandContext& ctx);    // host ...
// whoami, token ..., audit ...
void RegisterAccessCommands(CLI::App& app, CommandContext& ctx);
void RegisterSecretCommands(CLI::App& app, CommandContext& ctx);  // secret ...
inline constexpr const char* kSecretGroupHelp =
    "secrets of pools, given to the tasks that name them";

// Offline spec checks (no master needed): `paceline job validate -f SPEC` and
// `paceline pool validate -f SPEC`. Defined in spec_commands.cc.
void AddJobValidateCommand(CLI::App& job, CommandContext& ctx);
void AddPoolValidateCommand(CLI::App& pool, CommandContext& ctx);
// `paceline job watch [JOB]`. Defined in watch_command.cc.
void AddJobWatchCommand(CLI::App& job, CommandContext& ctx);
// `paceline job endpoints JOB [-w]`. Defined in endpoint_commands.cc.
void AddJobEndpointsCommand(CLI::App& job, CommandContext& ctx);
// `paceline job runs JOB`, and the schedule line of `job get`. Defined in cron_commands.cc.
void AddJobRunsCommand(CLI::App& job, CommandContext& ctx);
std::string ScheduleLine(const ScheduleSpec& schedule);
// `paceline job update|rollback` and `paceline update get|list|pause|resume|abort|wait`.
// Defined in update_commands.cc.
void AddJobUpdateCommands(CLI::App& job, CommandContext& ctx);
void RegisterUpdateCommands(CLI::App& app, CommandContext& ctx);

}  // namespace paceline::cli
