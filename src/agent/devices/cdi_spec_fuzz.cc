// libFuzzer target: ParseCdiSpec (cdi.h) on arbitrary bytes. Invariants: it never crashes or
// throws; a failure is INVALID_ARGUMENT labelled with the file name; a spec it reads has a
// supported version, a kind with a '/', and every device node an absolute path.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "agent/devices/cdi.h"
#include "common/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline::agent;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(text, "fuzz.yaml");
  if (!spec.ok()) {
    PL_CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument) << spec.status();
    PL_CHECK(absl::StartsWith(spec.status().message(), "fuzz.yaml")) << spec.status();
    return 0;
  }
  PL_CHECK(absl::StartsWith(spec->version, "0.")) << spec->version;
  PL_CHECK(spec->kind.find('/') != std::string::npos) << spec->kind;
  auto check = [](const CdiEdits& e) {
    for (const CdiDeviceNode& n : e.device_nodes) PL_CHECK(absl::StartsWith(n.path, "/"));
  };
  check(spec->edits);
  for (const auto& [name, edits] : spec->devices) check(edits);
  return 0;
}
