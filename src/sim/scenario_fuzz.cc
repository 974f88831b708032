// libFuzzer target: ParseScenario on arbitrary bytes. Invariants: it never crashes or throws;
// a failure is INVALID_ARGUMENT whose every line starts with the file name and a position; an
// accepted scenario has hosts, declared leaf pools for its jobs, jobs sorted by arrival within
// run_for, and parses to the same scenario again.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/check.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sim::Scenario> sc = sim::ParseScenario(text, "fuzz.yaml");
  if (!sc.ok()) {
    PL_CHECK(sc.status().code() == absl::StatusCode::kInvalidArgument) << sc.status();
    for (absl::string_view line : absl::StrSplit(sc.status().message(), '\n')) {
      PL_CHECK(absl::StartsWith(line, "fuzz.yaml:")) << sc.status();
    }
    return 0;
  }
  PL_CHECK(!sc->hosts.empty());
  for (size_t i = 0; i < sc->jobs.size(); ++i) {
    PL_CHECK(sc->pools.contains(sc->jobs[i].pool)) << sc->jobs[i].pool;
    PL_CHECK(sc->jobs[i].at <= sc->run_for);
    if (i > 0) PL_CHECK(sc->jobs[i - 1].at <= sc->jobs[i].at);
  }
  absl::StatusOr<sim::Scenario> again = sim::ParseScenario(text, "fuzz.yaml");
  PL_CHECK(again.ok() && *again == *sc) << "parsing is not deterministic";
  return 0;
}
