// Offline spec checks: `paceline job validate -f SPEC`, `paceline pool validate -f SPEC`.
//
// They read and check a spec file without a master. On success they print a one-line summary
// (or, with `-o json`, a JSON object of the summary fields) and exit 0. On failure every
// problem goes to stderr as "FILE:LINE:COLUMN: FIELD: what is wrong; expected ...", followed
// by an "error:" line, and the exit code is 1; with `-o json` stdout also gets
// {"valid": false, "file": ..., "errors": [...]}.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/context.h"
#include "cli/output.h"
#include "common/units.h"
#include "nlohmann/json.hpp"
#include "spec/yaml_spec.h"

namespace paceline::cli {
namespace {

using Json = nlohmann::json;

Json ResourcesJson(const Resources& r) {
  Json j = Json::object();
  for (Dim d : kAllDims) j[std::string(DimName(d))] = FormatQuantity(d, r[d]);
  return j;
}

// Reports a failed load: parse errors line by line, anything else as one error.
void ReportFailure(CommandContext& ctx, absl::string_view kind, const std::string& path,
                   const absl::Status& status) {
  std::vector<std::string> lines = absl::StrSplit(status.message(), '\n');
  PrintStructured(
      ctx.client,
      Json{{"valid", false}, {"kind", std::string(kind)}, {"file", path}, {"errors", lines}});
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    ctx.Fail(status);
    return;
  }
  std::cerr << status.message() << "\n";
  size_t problems = std::vector<absl::string_view>(absl::StrSplit(status.message(), '\n')).size();
  ctx.Fail(
      absl::InvalidArgumentError(absl::StrCat(path, ": the ", kind, " spec is invalid (", problems,
                                              problems == 1 ? " problem" : " problems", ")")));
}

// A valid spec: its summary as text, or `j` (with the summary) as JSON or YAML.
void ReportValid(CommandContext& ctx, const std::string& summary, Json j) {
  if (ctx.client.format() == OutputFormat::kTable) {
    std::cout << summary << std::endl;
    return;
  }
  j["summary"] = summary;
  PrintStructured(ctx.client, j);
}

void ValidateJob(CommandContext& ctx, const std::string& path) {
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
  if (!spec.ok()) return ReportFailure(ctx, "job", path, spec.status());
  Json j{{"valid", true},
         {"kind", "job"},
         {"file", path},
         {"name", spec->name},
         {"type", std::string(JobTypeName(spec->type))},
         {"instances", spec->instances},
         {"priority", spec->priority},
         {"resources_per_instance", ResourcesJson(spec->task.resources)},
         {"instance_overrides", spec->instance_overrides.size()}};
  ReportValid(ctx, SummarizeJobSpec(*spec), std::move(j));
}

void ValidatePool(CommandContext& ctx, const std::string& path) {
  absl::StatusOr<PoolSpec> spec = LoadPoolSpecFile(path);
  if (!spec.ok()) return ReportFailure(ctx, "pool", path, spec.status());
  Json shares = Json::object();
  for (Dim d : kAllDims) shares[std::string(DimName(d))] = spec->dim(d).share;
  Json j{{"valid", true},
         {"kind", "pool"},
         {"file", path},
         {"type", std::string(PoolTypeName(spec->type))},
         {"reservation", ResourcesJson(spec->Reservation())},
         {"limit", ResourcesJson(spec->Limit())},
         {"share", shares},
         {"controller_limit_percent", nullptr},
         {"slack_limit_percent", nullptr}};
  if (spec->controller_limit_percent)
    j["controller_limit_percent"] = *spec->controller_limit_percent;
  if (spec->slack_limit_percent) j["slack_limit_percent"] = *spec->slack_limit_percent;
  ReportValid(ctx, SummarizePoolSpec(*spec), std::move(j));
}

void AddValidate(CLI::App& group, CommandContext& ctx, absl::string_view kind,
                 void (*validate)(CommandContext&, const std::string&)) {
  CLI::App* cmd = group.add_subcommand(
      "validate", absl::StrCat("check a ", kind, " spec file offline (no master needed)"));
  auto path = std::make_shared<std::string>();
  cmd->add_option("-f,--file", *path, absl::StrCat(kind, " spec YAML file (see docs/specs.md)"))
      ->required();
  cmd->callback([&ctx, path, validate] { validate(ctx, *path); });
}

}  // namespace

void AddJobValidateCommand(CLI::App& job, CommandContext& ctx) {
  AddValidate(job, ctx, "job", ValidateJob);
}

void AddPoolValidateCommand(CLI::App& pool, CommandContext& ctx) {
  AddValidate(pool, ctx, "pool", ValidatePool);
}

}  // namespace paceline::cli
