#pragma once
// How every SQL backend keeps the parts of a record that are not plain columns: a job's earlier
// spec versions (JSON object: version -> spec YAML) and its updates (JSON array), a host's
// labels (JSON object of strings). Decoding validates everything and names what is wrong
// (DATA_LOSS: the row cannot be trusted).
//
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "records/records.h"
#include "spec/job_spec.h"
#include "store/bad_row.h"  // BadRow, for the decoders

namespace paceline::store {

std::string EncodeOldSpecs(const std::map<uint64_t, JobSpec>& specs);
absl::StatusOr<std::map<uint64_t, JobSpec>> DecodeOldSpecs(const std::string& text);

std::string EncodeUpdates(const std::vector<records::UpdateRecord>& updates);
absl::StatusOr<std::vector<records::UpdateRecord>> DecodeUpdates(const std::string& text);

std::string EncodeLabels(const std::map<std::string, std::string>& labels);
absl::StatusOr<std::map<std::string, std::string>> DecodeLabels(const std::string& text);

}  // namespace paceline::store
