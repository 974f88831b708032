#pragma once
// The answer of the job and task services to a job id the master does not hold: NOT_FOUND,
// saying where a finished job went (the archive, after its pool's retention) and the command
// that reads it there.
//
// Thread-safety: a pure function.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace paceline::api {

inline absl::Status JobNotFound(uint64_t id) {
  return absl::NotFoundError(absl::StrCat("job ", id,
                                          " not found (a finished job is archived after its "
                                          "pool's retention: paceline job get --archived ",
                                          id, ")"));
}

}  // namespace paceline::api
