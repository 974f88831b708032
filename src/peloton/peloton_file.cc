// Peloton config files read and converted (peloton.h).

#include "peloton/peloton.h"
#include "spec/yaml_spec.h"

namespace paceline::peloton {

absl::StatusOr<Converted<JobSpec>> ConvertJobFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecFile(path, "Peloton job config");
  if (!text.ok()) return text.status();
  return ConvertJob(*text, path);
}

absl::StatusOr<Converted<PoolSpec>> ConvertPoolFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecFile(path, "Peloton resource pool config");
  if (!text.ok()) return text.status();
  return ConvertPool(*text, path);
}

}  // namespace paceline::peloton
