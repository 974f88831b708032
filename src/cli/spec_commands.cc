// Offline spec checks: `paceline job validate -f SPEC`, `paceline pool validate -f SPEC`.

#include "CLI/CLI.hpp"
#include "cli/context.h"

namespace paceline::cli {

void AddJobValidateCommand(CLI::App&, CommandContext&) {}
void AddPoolValidateCommand(CLI::App&, CommandContext&) {}

}  // namespace paceline::cli
