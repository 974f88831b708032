#pragma once
// Peloton configs on the command line: `paceline convert peloton FILE` prints the Paceline spec
// of a Peloton job or resource-pool config, and `job create` / `pool create` take
// `--format peloton` to submit one as it is (src/peloton/peloton.h converts; the warnings of
// the conversion go to stderr, each "warning: FILE:LINE:COLUMN: FIELD: ...").

#include <string>

#include "absl/status/statusor.h"
#include "cli/context.h"

namespace paceline::cli {

// Adds `--format paceline|peloton` (default paceline) to a command that reads a spec file.
void AddFormatOption(CLI::App& cmd, std::string& format);
// The spec_name sent with a file's spec: the file, marked when it was converted.
std::string SpecName(const std::string& file, const std::string& format);

// The Paceline spec YAML to send for `file` in `format` (paceline: the file as it is, checked
// locally first; peloton: converted, its warnings printed to stderr).
absl::StatusOr<std::string> JobSpecYaml(const std::string& file, const std::string& format);
absl::StatusOr<std::string> PoolSpecYaml(const std::string& file, const std::string& format);

void RegisterConvertCommand(CLI::App& app, CommandContext& ctx);  // convert peloton FILE

}  // namespace paceline::cli
