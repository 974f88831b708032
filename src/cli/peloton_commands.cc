#include "cli/peloton_commands.h"

#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "peloton/peloton.h"
#include "spec/yaml_spec.h"

namespace paceline::cli {
namespace {

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
}

// The printed spec with a header that says where it comes from and what was adjusted.
std::string WithHeader(const std::string& file, const std::vector<std::string>& warnings,
                       const std::string& spec) {
  std::string out = absl::StrCat("# Converted from the Peloton config ", file,
                                 " by `paceline convert peloton`.\n");
  if (!warnings.empty()) absl::StrAppend(&out, "# What changed on the way:\n");
  for (const std::string& w : warnings) absl::StrAppend(&out, "#   ", w, "\n");
  return absl::StrCat(out, spec);
}

struct ConvertFlags {
  std::string file;
  std::string kind = "auto";
  std::string out;
};

}  // namespace

void AddFormatOption(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format,
                 "the file's format: paceline (docs/specs.md) or peloton (a Peloton JobConfig or "
                 "ResourcePoolConfig, converted; docs/migrating-from-peloton.md)")
      ->check(CLI::IsMember({"paceline", "peloton"}))
      ->capture_default_str();
}

std::string SpecName(const std::string& file, const std::string& format) {
  return format == "peloton" ? absl::StrCat(file, " (converted from Peloton)") : file;
}

absl::StatusOr<std::string> JobSpecYaml(const std::string& file, const std::string& format) {
  if (format == "peloton") {
    auto converted = peloton::ConvertJobFile(file);
    if (!converted.ok()) return converted.status();
    PrintWarnings(converted->warnings);
    return PrintJobSpec(converted->spec);
  }
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(file);
  if (!spec.ok()) return spec.status();
  return ReadSpecFile(file, "job spec");
}

absl::StatusOr<std::string> PoolSpecYaml(const std::string& file, const std::string& format) {
  if (format == "peloton") {
    auto converted = peloton::ConvertPoolFile(file);
    if (!converted.ok()) return converted.status();
    PrintWarnings(converted->warnings);
    return PrintPoolSpec(converted->spec);
  }
  absl::StatusOr<PoolSpec> spec = LoadPoolSpecFile(file);
  if (!spec.ok()) return spec.status();
  return ReadSpecFile(file, "pool spec");
}

void RegisterConvertCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = AddGroup(app, "convert", "convert specs of other schedulers into Paceline's");
  static ConvertFlags f;
  CLI::App* cmd = group->add_subcommand(
      "peloton", "print the Paceline spec of a Peloton job or resource-pool config (offline)");
  cmd->add_option("file", f.file, "the Peloton config (YAML)")->required();
  cmd->add_option("--kind", f.kind, "job, pool, or auto: a config with a resources list is a pool")
      ->check(CLI::IsMember({"auto", "job", "pool"}))
      ->capture_default_str();
  cmd->add_option("--out", f.out, "write the spec to this file instead of stdout");
  cmd->callback([&ctx] {
    absl::StatusOr<std::string> text = ReadSpecFile(f.file, "Peloton config");
    if (!text.ok()) return ctx.Fail(text.status());
    const bool pool = f.kind == "pool" ||
                      (f.kind == "auto" && peloton::GuessKind(*text) == peloton::ConfigKind::kPool);
    std::vector<std::string> warnings;
    std::string spec;
    if (pool) {
      auto converted = peloton::ConvertPool(*text, f.file);
      if (!converted.ok()) return ctx.Fail(converted.status());
      warnings = converted->warnings;
      spec = PrintPoolSpec(converted->spec);
    } else {
      auto converted = peloton::ConvertJob(*text, f.file);
      if (!converted.ok()) return ctx.Fail(converted.status());
      warnings = converted->warnings;
      spec = PrintJobSpec(converted->spec);
    }
    PrintWarnings(warnings);
    const std::string out = WithHeader(f.file, warnings, spec);
    if (f.out.empty()) {
      std::cout << out;
      return;
    }
    std::ofstream file(f.out, std::ios::binary | std::ios::trunc);
    file << out;
    file.close();
    if (!file)
      return ctx.Fail(
          absl::FailedPreconditionError(absl::StrCat("--out: cannot write '", f.out, "'")));
    std::cerr << (pool ? "pool" : "job") << " spec written to " << f.out << std::endl;
  });
}

}  // namespace paceline::cli
