#pragma once
// The command line's reference, generated from the CLI11 command tree itself so that it can
// never disagree with `--help`: a bash completion script (`paceline completion bash`) and man
// pages (`paceline man DIR`), which the Debian package ships (docs/operations.md).
//
// Hidden commands and options (empty group) are left out. Pure functions of the tree.

#include <map>
#include <string>

#include "CLI/CLI.hpp"

namespace paceline::cli {

// A bash completion script for `app`: at any depth it offers the subcommands and long options
// of the command typed so far (the top level's options everywhere), and file names after an
// option that takes a value.
std::string BashCompletion(const CLI::App& app);

// Man pages in section 1, by file name: "NAME.1" for `app` (its commands and options) and
// "NAME-CMD.1" for each visible top-level command CMD (its own subcommands, each with its
// options and positional arguments). `version` goes into each page's header.
std::map<std::string, std::string> ManPages(const CLI::App& app, const std::string& version);

// Adds `completion bash` and `man DIR` to `app`.
void RegisterReferenceCommands(CLI::App& app, int& exit_code);

}  // namespace paceline::cli
