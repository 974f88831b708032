#include "store/spec_parsing.h"

#include <utility>

#include "spec/yaml_spec.h"
#include "store/row_codec.h"

namespace paceline::store {

absl::Status ParseStoredSpecs(const std::vector<std::string>& texts,
                              std::vector<records::JobRecord>& jobs) {
  for (size_t i = 0; i < texts.size() && i < jobs.size(); ++i) {
    records::JobRecord& j = jobs[i];
    absl::StatusOr<JobSpec> spec = ParseJobSpec(texts[i], "stored job spec");
    if (!spec.ok()) return BadRow("jobs", j.id.ToString(), spec.status().message());
    j.spec = *std::move(spec);
  }
  return absl::OkStatus();
}

SpecParsing::SpecParsing(std::vector<std::string> texts, std::vector<records::JobRecord>* jobs) {
  if (texts.size() < kThreadFrom) {
    parsed_ = ParseStoredSpecs(texts, *jobs);
    return;
  }
  done_ = std::async(std::launch::async,
                     [texts = std::move(texts), jobs] { return ParseStoredSpecs(texts, *jobs); });
}

SpecParsing::~SpecParsing() { (void)Wait(); }

absl::Status SpecParsing::Wait() {
  if (!done_.valid()) return std::exchange(parsed_, absl::OkStatus());
  return done_.get();
}

}  // namespace paceline::store
