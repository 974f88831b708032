// libFuzzer target: ParsePoolSpec on arbitrary bytes. Invariants: it never crashes or throws;
// a failure is INVALID_ARGUMENT labelled with the file name; an accepted spec prints to YAML
// that parses back to the same spec and prints identically.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "common/check.h"
#include "spec/yaml_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec(text, "fuzz.yaml");
  if (!spec.ok()) {
    PL_CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument) << spec.status();
    PL_CHECK(absl::StartsWith(spec.status().message(), "fuzz.yaml:")) << spec.status();
    return 0;
  }
  std::string printed = PrintPoolSpec(*spec);
  absl::StatusOr<PoolSpec> back = ParsePoolSpec(printed, "printed.yaml");
  PL_CHECK(back.ok()) << back.status() << "\n" << printed;
  PL_CHECK(*back == *spec) << "round trip changed the spec:\n" << printed;
  PL_CHECK(PrintPoolSpec(*back) == printed) << "printing is not canonical:\n" << printed;
  (void)SummarizePoolSpec(*spec);
  return 0;
}
