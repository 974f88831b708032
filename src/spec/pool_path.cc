#include "spec/pool_path.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace paceline::spec {
namespace {

bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-'; }

}  // namespace

absl::Status ValidatePoolPath(absl::string_view path) {
  if (path == "/") return absl::OkStatus();
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("pool path \"", path, "\" must start with '/' (e.g. /ads/training)"));
  }
  if (path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("pool path \"", path, "\" must not end with '/'"));
  }
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == absl::string_view::npos) end = path.size();
    absl::string_view name = path.substr(start, end - start);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pool path \"", path, "\" has an empty segment"));
    }
    if (name.size() > kMaxPoolNameLength) {
      return absl::InvalidArgumentError(absl::StrCat("pool path \"", path, "\": segment \"", name,
                                                     "\" is longer than ", kMaxPoolNameLength,
                                                     " characters"));
    }
    if (!absl::ascii_isalnum(name[0])) {
      return absl::InvalidArgumentError(absl::StrCat("pool path \"", path, "\": segment \"", name,
                                                     "\" must start with a letter or a digit"));
    }
    for (char c : name) {
      if (!IsNameChar(c)) {
        return absl::InvalidArgumentError(
            absl::StrCat("pool path \"", path, "\": segment \"", name,
                         "\" may contain only letters, digits, '.', '_' and '-'"));
      }
    }
    start = end + 1;
  }
  return absl::OkStatus();
}

absl::string_view ParentPath(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == 0 || slash == absl::string_view::npos) return "/";
  return path.substr(0, slash);
}

absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::string ChildPoolPath(absl::string_view parent, absl::string_view name) {
  if (parent == "/") return absl::StrCat("/", name);
  return absl::StrCat(parent, "/", name);
}

}  // namespace paceline::spec
