// libFuzzer target: ParseScenario on arbitrary bytes. Invariants: it never crashes or throws;
// a failure is INVALID_ARGUMENT that starts with the file name and a position; an
// accepted scenario has hosts, declared leaf pools for its jobs, jobs sorted by arrival within
// run_for, and parses to the same scenario again.

#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "common/check.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sim::Scenario> sc = sim::ParseScenario(text, "fuzz.yaml");
  if (!sc.ok()) {
    PL_CHECK(sc.status().code() == absl::StatusCode::kInvalidArgument) << sc.status();
    // Like the spec fuzzers: the message starts with the file name. (Not every line: a syntax error
    // may quote a raw control character of the input, a newline included.)
    PL_CHECK(absl::StartsWith(sc.status().message(), "fuzz.yaml:")) << sc.status();
    return 0;
  }
  PL_CHECK(!sc->hosts.empty());
  for (size_t i = 0; i < sc->jobs.size(); ++i) {
    PL_CHECK(sc->pools.contains(sc->jobs[i].pool)) << sc->jobs[i].pool;
    PL_CHECK(sc->jobs[i].at <= sc->run_for);
    if (i > 0) {
      PL_CHECK(sc->jobs[i - 1].at <= sc->jobs[i].at);
    }
  }
  absl::StatusOr<sim::Scenario> again = sim::ParseScenario(text, "fuzz.yaml");
  PL_CHECK(again.ok() && *again == *sc) << "parsing is not deterministic";
  return 0;
}
