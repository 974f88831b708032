#include "store/spec_parsing.h"

#include <memory>
#include <utility>

#include "spec/yaml_spec.h"
#include "store/row_codec.h"

namespace paceline::store {

namespace {

absl::Status ParseRange(const std::vector<std::string>& texts,
                        std::vector<records::JobRecord>& jobs, size_t begin, size_t end) {
  for (size_t i = begin; i < end && i < texts.size() && i < jobs.size(); ++i) {
    records::JobRecord& j = jobs[i];
    absl::StatusOr<JobSpec> spec = ParseJobSpec(texts[i], "stored job spec");
    if (!spec.ok()) return BadRow("jobs", j.id.ToString(), spec.status().message());
    j.spec = *std::move(spec);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseStoredSpecs(const std::vector<std::string>& texts,
                              std::vector<records::JobRecord>& jobs) {
  return ParseRange(texts, jobs, 0, texts.size());
}

SpecParsing::SpecParsing(std::vector<std::string> texts, std::vector<records::JobRecord>* jobs,
                         int threads) {
  if (texts.size() < kThreadFrom) {
    parsed_ = ParseStoredSpecs(texts, *jobs);
    return;
  }
  auto shared = std::make_shared<const std::vector<std::string>>(std::move(texts));
  const size_t n = shared->size();
  const size_t parts = threads > 1 ? 2 : 1;
  for (size_t p = 0; p < parts; ++p) {
    done_.push_back(std::async(std::launch::async,
                               [shared, jobs, from = n * p / parts, to = n * (p + 1) / parts] {
                                 return ParseRange(*shared, *jobs, from, to);
                               }));
  }
}

SpecParsing::~SpecParsing() { (void)Wait(); }

absl::Status SpecParsing::Wait() {
  absl::Status first = std::exchange(parsed_, absl::OkStatus());
  for (std::future<absl::Status>& f : done_) {
    if (!f.valid()) continue;
    absl::Status s = f.get();
    if (first.ok()) first = s;  // the lowest part's error: the first job that does not parse
  }
  return first;
}

}  // namespace paceline::store
