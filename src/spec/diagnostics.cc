// Diagnostics: the error list of one parse (see yaml_reader.h).

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "spec/yaml_reader.h"

namespace paceline::yaml_internal {
namespace {

constexpr size_t kMaxReportedErrors = 100;

// True when `inner` is `outer` or a field below it ("task" covers "task.ports[0]").
bool Covers(absl::string_view outer, absl::string_view inner) {
  if (!absl::StartsWith(inner, outer)) return false;
  if (inner.size() == outer.size() || outer.empty()) return true;
  char next = inner[outer.size()];
  return next == '.' || next == '[';
}

}  // namespace

Location ToLocation(const Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return Location{};
  return Location{mark.line + 1, mark.column + 1};
}

void Diagnostics::Error(Location loc, std::string path, std::string message) {
  // The same error reached twice (a Peloton default field read for several instances).
  if (!seen_.insert(absl::StrCat(loc.line, ":", loc.column, ":", path, ":", message)).second) {
    return;
  }
  errors_.push_back(Entry{loc, std::move(path), std::move(message)});
}

void Diagnostics::Record(const std::string& path, Location loc) { locations_.emplace(path, loc); }

bool Diagnostics::Touched(absl::string_view path) const {
  for (const Entry& e : errors_) {
    if (Covers(e.path, path) || Covers(path, e.path)) return true;
  }
  return false;
}

Location Diagnostics::Find(std::string path) const {
  while (!path.empty()) {
    auto it = locations_.find(path);
    if (it != locations_.end()) return it->second;
    size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) break;
    path.resize(cut);
  }
  auto root = locations_.find("");
  return root == locations_.end() ? Location{} : root->second;
}

void Diagnostics::AddValidationErrors(const std::vector<FieldError>& errors,
                                      absl::string_view under) {
  auto full = [under](const std::string& path) {
    if (under.empty()) return path;
    if (path.empty()) return std::string(under);
    return absl::StrCat(under, path[0] == '[' ? "" : ".", path);
  };
  std::vector<Entry> accepted;
  for (const FieldError& e : errors) {
    std::string path = full(e.path);
    bool skip = Touched(path);
    for (const std::string& r : e.related) skip |= Touched(full(r));
    if (!skip) accepted.push_back(Entry{Find(path), path, e.message});
  }
  for (Entry& e : accepted) errors_.push_back(std::move(e));
}

absl::Status Diagnostics::ToStatus(absl::string_view file_name) const {
  if (errors_.empty()) return absl::OkStatus();
  std::vector<Entry> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.loc.line, a.loc.column) < std::pair(b.loc.line, b.loc.column);
  });
  std::string out;
  std::string previous;
  size_t shown = 0;
  for (const Entry& e : sorted) {
    std::string line = absl::StrCat(file_name, ":", e.loc.line, ":", e.loc.column, ": ", e.path,
                                    e.path.empty() ? "" : ": ", e.message);
    if (line == previous) continue;
    if (shown == kMaxReportedErrors) {
      absl::StrAppend(&out, "\n", file_name, ": too many errors; stopped after ",
                      kMaxReportedErrors);
      break;
    }
    absl::StrAppend(&out, shown == 0 ? "" : "\n", line);
    previous = std::move(line);
    ++shown;
  }
  return absl::InvalidArgumentError(out);
}

}  // namespace paceline::yaml_internal
