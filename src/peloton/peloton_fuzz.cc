// libFuzzer target: the Peloton converters on arbitrary bytes. Invariants: they never crash or
// throw; a failure is INVALID_ARGUMENT labelled with the file name; a converted spec prints as
// a Paceline spec that parses back to the same spec.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "common/check.h"
#include "peloton/peloton.h"
#include "spec/yaml_spec.h"

namespace {

void CheckFailure(const absl::Status& s) {
  PL_CHECK(s.code() == absl::StatusCode::kInvalidArgument) << s;
  PL_CHECK(absl::StartsWith(s.message(), "fuzz.yaml:")) << s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto job = peloton::ConvertJob(text, "fuzz.yaml");
  if (!job.ok()) {
    CheckFailure(job.status());
  } else {
    std::string printed = PrintJobSpec(job->spec);
    absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
    PL_CHECK(back.ok()) << back.status() << "\n" << printed;
    PL_CHECK(*back == job->spec) << "the printed spec reads back differently:\n" << printed;
  }
  auto pool = peloton::ConvertPool(text, "fuzz.yaml");
  if (!pool.ok()) {
    CheckFailure(pool.status());
  } else {
    std::string printed = PrintPoolSpec(pool->spec);
    absl::StatusOr<PoolSpec> back = ParsePoolSpec(printed, "printed.yaml");
    PL_CHECK(back.ok()) << back.status() << "\n" << printed;
    PL_CHECK(*back == pool->spec) << "the printed spec reads back differently:\n" << printed;
  }
  (void)peloton::GuessKind(text);
  return 0;
}
