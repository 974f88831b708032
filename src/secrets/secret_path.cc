#include "secrets/secret_path.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "spec/job_spec.h"
#include "spec/pool_path.h"

namespace paceline::secrets {

absl::Status CheckSecretName(absl::string_view name) {
  if (IsSecretName(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("\"", absl::CHexEscape(name.substr(0, 80)),
                   "\" is not a secret name; expected 1 to 63 characters from a-z, 0-9, '.', '_' "
                   "and '-', starting with a letter or a digit"));
}

absl::StatusOr<SecretPath> ParseSecretPath(absl::string_view path) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("secret path \"", path.substr(0, 80),
                     "\" is not a path; expected <pool>/<name>, e.g. /ads/db-password"));
  }
  size_t slash = path.rfind('/');
  SecretPath p;
  p.pool = slash == 0 ? "/" : std::string(path.substr(0, slash));
  p.name = std::string(path.substr(slash + 1));
  if (JoinSecretPath(p.pool, "") != path.substr(0, slash + 1)) {  // "//x": an empty segment
    return absl::InvalidArgumentError(absl::StrCat(
        "secret path \"", path.substr(0, 80), "\" has an empty segment; expected <pool>/<name>"));
  }
  if (absl::Status s = spec::ValidatePoolPath(p.pool); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret path \"", path.substr(0, 80), "\": its pool: ", s.message()));
  }
  if (absl::Status s = CheckSecretName(p.name); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret path \"", path.substr(0, 80), "\": ", s.message()));
  }
  p.full = std::string(path);
  return p;
}

std::string JoinSecretPath(absl::string_view pool, absl::string_view name) {
  return pool == "/" ? absl::StrCat("/", name) : absl::StrCat(pool, "/", name);
}

std::vector<std::string> Candidates(absl::string_view pool, absl::string_view name) {
  std::vector<std::string> out;
  absl::string_view p = pool;
  while (true) {
    out.push_back(JoinSecretPath(p, name));
    if (p == "/" || p.empty()) break;
    p = spec::ParentPath(p);
  }
  return out;
}

}  // namespace paceline::secrets
