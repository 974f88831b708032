#include "cli/write_revision.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::cli {
namespace {

constexpr size_t kSetsKept = 32;

std::string FilePath() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return absl::StrCat(home, "/.paceline/revisions");
}

// The lines of the file, oldest first.
std::vector<std::pair<std::string, int64_t>> ReadAll(const std::string& path) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string addrs, rev;
    int64_t n = 0;
    if (fields >> addrs >> rev && absl::SimpleAtoi(rev, &n) && n >= 0) out.emplace_back(addrs, n);
  }
  return out;
}

}  // namespace

int64_t LoadWriteRevision(const std::vector<std::string>& addrs) {
  const std::string path = FilePath();
  if (path.empty()) return -1;
  const std::string key = absl::StrJoin(addrs, ",");
  int64_t out = -1;
  for (const auto& [k, rev] : ReadAll(path)) {
    if (k == key) out = rev;
  }
  return out;
}

void SaveWriteRevision(const std::vector<std::string>& addrs, int64_t revision, bool may_lower) {
  const std::string path = FilePath();
  if (path.empty() || revision < 0) return;
  const std::string key = absl::StrJoin(addrs, ",");
  std::vector<std::pair<std::string, int64_t>> all = ReadAll(path);
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& e) { return e.first == key; });
  if (it != all.end()) {
    if (it->second == revision || (it->second > revision && !may_lower)) return;
    all.erase(it);
  }
  all.emplace_back(key, revision);  // the newest last; the oldest sets are forgotten
  if (all.size() > kSetsKept) all.erase(all.begin(), all.end() - kSetsKept);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = absl::StrCat(path, ".", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [k, rev] : all) out << k << " " << rev << "\n";
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace paceline::cli
