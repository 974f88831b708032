// libFuzzer target: DaemonSettings::ApplyFile with the keys of `paceline master` and of
// `paceline agent` (strings, switches, a number, lists) on arbitrary bytes. Invariants: it never
// crashes or throws; a refusal is INVALID_ARGUMENT labelled with the file name and changes no
// value; an accepted file prints (Print) to YAML that reads back to the same values and prints the
// same.

#include <cstddef>
#include <cstdint>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/check.h"
#include "main/daemon_config.h"
#include "main/daemon_flags.h"

namespace {

using namespace paceline::cli;

// A daemon's flags as the binary registers them: the master's or the agent's.
struct Daemon {
  explicit Daemon(bool is_master) : settings(is_master ? "paceline master" : "paceline agent") {
    if (is_master) {
      AddMasterFlags(&app, master, settings);
    } else {
      AddAgentFlags(&app, agent, /*with_master=*/true, settings);
    }
  }
  CLI::App app;
  MasterFlags master;
  AgentFlags agent;
  DaemonSettings settings;
};

// A printed configuration without its heading and sources: the values alone.
std::string Values(const std::string& printed) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(printed, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    absl::StrAppend(&out, line.substr(0, line.rfind("  # ")), "\n");
  }
  return out;
}

}  // namespace

void Check(absl::string_view text, bool is_master) {
  Daemon daemon(is_master);
  const std::string before = daemon.settings.Print();
  absl::Status s = daemon.settings.ApplyFile(text, "fuzz.yaml");
  if (!s.ok()) {
    PL_CHECK(s.code() == absl::StatusCode::kInvalidArgument) << s;
    PL_CHECK(absl::StartsWith(s.message(), "fuzz.yaml")) << s;
    PL_CHECK(daemon.settings.Print() == before) << "a refused file changed a value";
    return;
  }
  const std::string printed = daemon.settings.Print();
  Daemon back(is_master);
  absl::Status again = back.settings.ApplyFile(printed, "printed.yaml");
  PL_CHECK(again.ok()) << again << "\n" << printed;
  PL_CHECK(Values(back.settings.Print()) == Values(printed)) << "round trip changed:\n" << printed;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  Check(text, /*is_master=*/true);
  Check(text, /*is_master=*/false);
  return 0;
}
