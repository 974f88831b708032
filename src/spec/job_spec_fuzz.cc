// libFuzzer target: ParseJobSpec on arbitrary bytes. Invariants: it never crashes or throws;
// a failure is INVALID_ARGUMENT labelled with the file name; an accepted spec prints to YAML
// that parses back to the same spec (Parse(Print(Parse(x))) == Parse(x)) and prints
// identically.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "common/check.h"
#include "spec/yaml_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<JobSpec> spec = ParseJobSpec(text, "fuzz.yaml");
  if (!spec.ok()) {
    PL_CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument) << spec.status();
    PL_CHECK(absl::StartsWith(spec.status().message(), "fuzz.yaml:")) << spec.status();
    return 0;
  }
  std::string printed = PrintJobSpec(*spec);
  absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
  PL_CHECK(back.ok()) << back.status() << "\n" << printed;
  PL_CHECK(*back == *spec) << "round trip changed the spec:\n" << printed;
  PL_CHECK(PrintJobSpec(*back) == printed) << "printing is not canonical:\n" << printed;
  (void)SummarizeJobSpec(*spec);
  return 0;
}
