// LoadPoolSpecFile / LoadJobSpecFile: read a spec file, then parse it (see yaml_spec.h).

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline {

absl::StatusOr<std::string> ReadSpecFile(const std::string& path, absl::string_view what) {
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat("cannot read ", what, " '", path, "': no such file"));
  }
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", what, " '", path, "': ", ec.message()));
  }
  if (std::filesystem::is_directory(st)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", what, " '", path, "': it is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", what, " '", path, "': ", std::strerror(errno)));
  }
  std::string text;
  char buf[64 * 1024];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxSpecFileBytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot read ", what, " '", path, "': larger than ", kMaxSpecFileBytes >> 20, " MiB"));
    }
  }
  if (in.bad()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", what, " '", path, "': read error"));
  }
  return text;
}

absl::StatusOr<PoolSpec> LoadPoolSpecFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecFile(path, "pool spec");
  if (!text.ok()) return text.status();
  return ParsePoolSpec(*text, path);
}

absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecFile(path, "job spec");
  if (!text.ok()) return text.status();
  return ParseJobSpec(*text, path);
}

}  // namespace paceline
