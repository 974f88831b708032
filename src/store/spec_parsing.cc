#include "store/spec_parsing.h"

#include <utility>

#include "spec/yaml_spec.h"
#include "store/row_codec.h"

namespace paceline::store {

SpecParsing::SpecParsing(std::vector<std::string> texts, std::vector<records::JobRecord>* jobs)
    : done_(std::async(std::launch::async, [texts = std::move(texts), jobs] {
        for (size_t i = 0; i < texts.size() && i < jobs->size(); ++i) {
          records::JobRecord& j = (*jobs)[i];
          absl::StatusOr<JobSpec> spec = ParseJobSpec(texts[i], "stored job spec");
          if (!spec.ok()) return BadRow("jobs", j.id.ToString(), spec.status().message());
          j.spec = *std::move(spec);
        }
        return absl::OkStatus();
      })) {}

SpecParsing::~SpecParsing() { (void)Wait(); }

absl::Status SpecParsing::Wait() {
  if (!done_.valid()) return absl::OkStatus();
  return done_.get();
}

}  // namespace paceline::store
