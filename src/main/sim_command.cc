// `paceline sim`: runs the scheduler core against simulated hosts and a simulated clock
// (src/sim, docs/sim.md).
//
//   paceline sim SCENARIO.yaml [--seed N] [--report FILE] [--plot DIR] [-o json]
//   paceline sim --trace alibaba-gpu PATH... [--nodes all|gpu] [--run-for D] [--cycle-every D]
//                [--placement PROFILE] [--seed N] [--report FILE] [--plot DIR] [-o json]
//   paceline sim --trace alibaba-gpu PATH... --fill [--protocol paceline|fgd]
//                [--fill-target PCT] [--profiles A,B,...] [--candidates all|N|profile]
//                [--repeat N] [--nodes all|gpu] [--seed N] [--report FILE] [--plot DIR]
//
// Prints a summary (or, with -o json, the JSON report) on stdout; --report writes the JSON to
// a file; --plot draws PNGs with gnuplot. Exit 0 when the simulation ran (whatever it found),
// 1 when the scenario or trace is invalid or a file cannot be written, 2 on bad usage.

#include "main/commands.h"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"
#include "common/units.h"
#include "placement/profile.h"
#include "sim/fill.h"
#include "sim/sim_driver.h"
#include "sim/sim_plot.h"
#include "sim/sim_report.h"
#include "sim/trace_replay.h"

namespace paceline::cli {
namespace {

struct SimFlags {
  std::vector<std::string> inputs;
  std::string report;
  std::string plot;
  std::optional<uint64_t> seed;
  std::string trace;
  std::string nodes = "all";
  std::string run_for;
  std::string cycle_every;
  std::string placement;
  bool fill = false;
  std::string protocol = "paceline";
  std::string candidates = "all";
  double fill_target = 130;
  std::string profiles;
  int repeat = 1;
};

absl::Status WriteReport(const sim::Json& report, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << report.dump(2, ' ', false, sim::Json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) return absl::FailedPreconditionError(absl::StrCat("--report: cannot write ", path));
  return absl::OkStatus();
}

// Prints, writes and plots a finished report.
absl::Status Output(const SimFlags& f, CommandContext& ctx, const sim::Json& report,
                    const std::string& summary, bool fill) {
  if (ctx.client.format() == OutputFormat::kJson) {
    std::cout << report.dump(2, ' ', false, sim::Json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << summary << std::flush;
  }
  if (!f.report.empty()) RETURN_IF_ERROR(WriteReport(report, f.report));
  if (!f.plot.empty()) {
    absl::StatusOr<std::vector<std::string>> pngs =
        fill ? sim::PlotFillReport(report, f.plot) : sim::PlotScenarioReport(report, f.plot);
    if (!pngs.ok()) return pngs.status();
    if (ctx.client.format() != OutputFormat::kJson) {
      for (const std::string& p : *pngs) std::cout << "plot: " << p << "\n";
    }
  }
  return absl::OkStatus();
}

absl::Status RunScenarioFile(const SimFlags& f, CommandContext& ctx) {
  if (f.inputs.size() != 1) {
    return absl::InvalidArgumentError(
        "expected one scenario file (or --trace alibaba-gpu PATH... to replay a trace)");
  }
  for (const auto& [flag, set] :
       {std::pair("--nodes", f.nodes != "all"), std::pair("--run-for", !f.run_for.empty()),
        std::pair("--cycle-every", !f.cycle_every.empty()),
        std::pair("--placement", !f.placement.empty()), std::pair("--fill", f.fill),
        std::pair("--repeat", f.repeat != 1), std::pair("--profiles", !f.profiles.empty())}) {
    if (set) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": only with --trace; a scenario file sets its own"));
    }
  }
  absl::StatusOr<sim::Scenario> sc = sim::LoadScenarioFile(f.inputs[0]);
  if (!sc.ok()) return sc.status();
  if (f.seed) sc->seed = *f.seed;
  absl::StatusOr<sim::SimResult> result = sim::RunScenario(*sc);
  if (!result.ok()) return WithContext(result.status(), f.inputs[0]);
  sim::Json report = sim::BuildReport(*sc, *result, f.inputs[0]);
  return Output(f, ctx, report, sim::SummaryText(report), /*fill=*/false);
}

absl::Status RunTrace(const SimFlags& f, CommandContext& ctx) {
  if (f.trace != "alibaba-gpu") {
    return absl::InvalidArgumentError(
        absl::StrCat("--trace: unknown trace format '", f.trace, "'; expected alibaba-gpu"));
  }
  if (f.inputs.empty()) {
    return absl::InvalidArgumentError(
        "--trace alibaba-gpu: expected the trace's directory, or its node and pod list files");
  }
  absl::StatusOr<sim::AlibabaTraceInput> input =
      sim::LoadAlibabaTrace(f.inputs, /*gpu_nodes_only=*/f.nodes == "gpu");
  if (!input.ok()) return input.status();
  if (f.fill) {
    if (!f.run_for.empty() || !f.cycle_every.empty() || !f.placement.empty()) {
      return absl::InvalidArgumentError(
          "--run-for, --cycle-every and --placement are for trace replay; fill mode takes "
          "--protocol, --profiles, --candidates, --fill-target and --repeat");
    }
    sim::FillOptions o;
    o.protocol = f.protocol;
    absl::StatusOr<std::optional<uint32_t>> candidates = placement::ParseCandidates(f.candidates);
    if (!candidates.ok()) return WithContext(candidates.status(), "--candidates");
    o.max_candidates = *candidates;
    o.seed = f.seed.value_or(1);
    o.repetitions = f.repeat;
    o.target_percent = f.fill_target;
    if (!f.profiles.empty()) o.profiles = absl::StrSplit(f.profiles, ',', absl::SkipEmpty());
    absl::StatusOr<sim::Json> report = sim::RunFill(*input, o);
    if (!report.ok()) return report.status();
    return Output(f, ctx, *report, sim::FillSummaryText(*report), /*fill=*/true);
  }
  if (!f.profiles.empty() || f.repeat != 1 || f.fill_target != 130 || f.protocol != "paceline" ||
      f.candidates != "all") {
    return absl::InvalidArgumentError(
        "--protocol, --profiles, --candidates, --fill-target and --repeat need --fill");
  }
  sim::TraceReplayOptions o;
  o.seed = f.seed.value_or(1);
  if (!f.placement.empty()) o.placement = f.placement;
  if (!f.run_for.empty()) {
    absl::StatusOr<absl::Duration> d = ParseDurationStrict(f.run_for);
    if (!d.ok()) return WithFlag(d.status(), "--run-for");
    o.run_for = *d;
  }
  if (!f.cycle_every.empty()) {
    absl::StatusOr<absl::Duration> d = ParseDurationStrict(f.cycle_every);
    if (!d.ok() || *d <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cycle-every: '", f.cycle_every, "'; expected a positive duration"));
    }
    o.cycle_every = *d;
  }
  absl::StatusOr<sim::Scenario> sc = sim::TraceScenario(*input, o);
  if (!sc.ok()) return sc.status();
  absl::StatusOr<sim::SimResult> result = sim::RunScenario(*sc);
  if (!result.ok()) return result.status();
  sim::Json report = sim::BuildReport(*sc, *result, input->description);
  report["trace"] = input->Summary();
  return Output(f, ctx, report, sim::SummaryText(report), /*fill=*/false);
}

}  // namespace

void RegisterSimCommand(CLI::App& app, CommandContext& ctx) {
  static SimFlags f;
  CLI::App* sim = app.add_subcommand(
      "sim", "run the scheduler core against simulated hosts and a simulated clock");
  sim->footer(
      "\nExamples:\n"
      "  paceline sim examples/sim/fairness.yaml --plot out/\n"
      "  paceline sim examples/sim/preemption.yaml -o json --report report.json\n"
      "  paceline sim --trace alibaba-gpu TRACE_DIR --run-for 168h\n"
      "  paceline sim --trace alibaba-gpu TRACE_DIR --fill --repeat 5 --plot out/\n"
      "  paceline sim --trace alibaba-gpu NODES.csv TASKS.csv --fill --protocol fgd --seed 42 "
      "--repeat 10\n"
      "See docs/sim.md for the scenario format and the report.");
  sim->add_option("inputs", f.inputs, "SCENARIO.yaml, or with --trace the trace's dir or files");
  sim->add_option("--report", f.report, "write the JSON report to this file");
  sim->add_option("--plot", f.plot, "draw PNG plots into this directory (needs gnuplot)");
  sim->add_option("--seed", f.seed, "override the scenario's seed");
  sim->add_option("--trace", f.trace, "replay a trace instead of a scenario: alibaba-gpu");
  sim->add_option("--nodes", f.nodes, "trace nodes to simulate: all, or gpu (GPU nodes only)")
      ->check(CLI::IsMember({"all", "gpu"}))
      ->capture_default_str();
  sim->add_option("--run-for", f.run_for, "trace replay: simulated time (default: whole trace)");
  sim->add_option("--cycle-every", f.cycle_every, "trace replay: scheduling cycle (default 10s)");
  sim->add_option("--placement", f.placement, "trace replay: placement profile (default)");
  sim->add_flag("--fill", f.fill,
                "fill mode: submit trace tasks until the GPUs are oversubscribed");
  sim->add_option("--protocol", f.protocol,
                  "fill mode: paceline, or fgd (the FGD paper's protocol and baselines)")
      ->check(CLI::IsMember({"paceline", "fgd"}))
      ->capture_default_str();
  sim->add_option("--candidates", f.candidates,
                  "fill mode: feasible hosts a Paceline profile scores per placement: all, N, or "
                  "profile (the profile's own limits, as in the master)")
      ->capture_default_str();
  sim->add_option("--fill-target", f.fill_target, "fill mode: stop at this % of GPU capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  sim->add_option("--profiles", f.profiles,
                  "fill mode: placement profiles or scorer weights (pack=1+gpu_stranding=2), "
                  "comma-separated (default: the protocol's baselines and default)");
  sim->add_option("--repeat", f.repeat, "fill mode: repetitions (seeds SEED, SEED+1, ...)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sim->callback([&ctx] {
    absl::Status s = f.trace.empty() ? RunScenarioFile(f, ctx) : RunTrace(f, ctx);
    if (!s.ok()) {
      if (s.code() == absl::StatusCode::kInvalidArgument && absl::StrContains(s.message(), "\n")) {
        // Scenario errors, one per line, then a one-line verdict.
        std::cerr << s.message() << "\n";
        size_t n = std::count(s.message().begin(), s.message().end(), '\n') + 1;
        s = absl::InvalidArgumentError(absl::StrCat("the scenario is invalid (", n, " problems)"));
      }
      ctx.Fail(s);
    }
  });
}

}  // namespace paceline::cli
