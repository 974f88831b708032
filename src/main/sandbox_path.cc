#include "main/sandbox_path.h"

#include <system_error>

namespace paceline::cli {

bool TraversableByOthers(const std::filesystem::path& dir) {
  for (std::filesystem::path p = std::filesystem::absolute(dir).parent_path(); !p.empty();
       p = p.parent_path()) {
    std::error_code ec;
    auto st = std::filesystem::status(p, ec);
    if (!ec &&
        (st.permissions() & std::filesystem::perms::others_exec) == std::filesystem::perms::none) {
      return false;
    }
    if (p == p.root_path()) break;
  }
  return true;
}

}  // namespace paceline::cli
