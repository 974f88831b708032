#pragma once
// How the SQLite store keeps the parts of a JobRecord that are not plain columns: the earlier
// spec versions (JSON object: version -> spec YAML) and the updates (JSON array). Decoding
// validates everything and names what is wrong (DATA_LOSS: the row cannot be trusted).
//
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::store {

std::string EncodeOldSpecs(const std::map<uint64_t, JobSpec>& specs);
absl::StatusOr<std::map<uint64_t, JobSpec>> DecodeOldSpecs(const std::string& text);

std::string EncodeUpdates(const std::vector<records::UpdateRecord>& updates);
absl::StatusOr<std::vector<records::UpdateRecord>> DecodeUpdates(const std::string& text);

}  // namespace paceline::store
