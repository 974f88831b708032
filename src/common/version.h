#pragma once
// The version of this build and the git commit it was built from (generated at build time).

#include "absl/strings/string_view.h"

namespace paceline {

absl::string_view Version();  // e.g. "0.1.0"
absl::string_view Commit();   // e.g. "3f2a9c1d0b7e", "-dirty" appended for uncommitted changes

}  // namespace paceline
