// The version stamp of `paceline-next`, the upgrade drill's other build (tests/CMakeLists.txt):
// it takes the place of the generated one (src/common, cmake/version.cmake), so that the drill
// can tell the builds apart in `paceline version --all` and in /proc/PID/exe.
#include "common/version.h"

namespace paceline {

absl::string_view Version() { return "0.1.0+next"; }
absl::string_view Commit() { return "next"; }

}  // namespace paceline
