#pragma once
// The agent's work directory check shared by `paceline agent` and `paceline up`: tasks that
// run as an unprivileged user must reach their sandboxes under it.
//
// Thread-safety: a pure function over the file system's permissions.

#include <filesystem>

namespace paceline::cli {

// True when every existing ancestor of `dir` lets other users through (o+x).
bool TraversableByOthers(const std::filesystem::path& dir);

}  // namespace paceline::cli
