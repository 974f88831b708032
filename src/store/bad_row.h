#pragma once
// The error of a stored row that cannot be trusted, the same for every backend and codec:
// DATA_LOSS "store table T, row K: why".
//
// Thread-safety: a pure function.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace paceline::store {

inline absl::Status BadRow(absl::string_view table, absl::string_view key, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("store table ", table, ", row ", key, ": ", why));
}

}  // namespace paceline::store
