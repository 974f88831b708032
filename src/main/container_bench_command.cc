// `paceline bench containers --image-file DIR [--runs 200] [--containers 1000] [--registry
// HOST:PORT --registry-ca FILE | --cold-image-file DIR]`: the container benchmark
// (bench/container_bench.h): a real task runtime with crun in this process; warm start latency
// of container tasks against plain ones, 1,000 tiny containers at once, and a cold pull.
// Root only. scripts/bench-containers.sh (make bench-containers) builds the images and runs a
// registry for it.

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/container_bench.h"
#include "cli/table.h"
#include "common/units.h"
#include "main/commands.h"

namespace paceline::cli {
namespace {

std::string F(double ms) { return absl::StrFormat("%.1f", ms); }

std::string Cpu(const bench::CpuPerRun& c) {
  return absl::StrFormat("%.1f / %.1f / %s", c.agent_ms, c.below_ms,
                         c.cgroups_ms >= 0 ? F(c.cgroups_ms) : std::string("-"));
}

void Row(Table& t, const std::string& what, const bench::LatencySummary& run,
         const bench::LatencySummary& end, int failed, const std::string& cpu) {
  t.AddRow({what, absl::StrCat(end.count), absl::StrCat(failed), F(run.p50), F(run.p99), F(run.max),
            F(end.p50), F(end.p99), F(end.max), cpu});
}

void PrintThroughput(const bench::ThroughputResult& x, const char* what) {
  std::cout << absl::StrFormat(
                   "throughput: %d %s in %.1f s (%.0f/s; %.1f s inside Launch()), at most %d at "
                   "once",
                   x.tasks, what, absl::ToDoubleSeconds(x.wall), x.per_second,
                   absl::ToDoubleSeconds(x.launching), x.max_live)
            << std::endl;
  if (!x.first_error.empty()) std::cerr << "first error: " << x.first_error << std::endl;
}

void PrintReport(const bench::ContainerBenchReport& r) {
  Table t({"phase", "runs", "failed", "running p50", "p99", "max", "ended p50", "p99", "max",
           "cpu/run ms: agent / below / cgroups"});
  for (const bench::LatencyGroup& g : r.latency) {
    Row(t, absl::StrCat("warm, ", g.container ? "container" : "plain", " `", g.command, "`"),
        g.to_running, g.to_end, g.failed, Cpu(g.cpu));
  }
  if (const auto& x = r.throughput) {
    Row(t, absl::StrCat(x->tasks, " containers at once"), x->to_running, x->to_end, x->failed,
        Cpu(x->cpu));
  }
  if (const auto& x = r.throughput_plain) {
    Row(t, absl::StrCat(x->tasks, " plain tasks at once"), x->to_running, x->to_end, x->failed,
        Cpu(x->cpu));
  }
  if (r.cold) Row(t, "cold pull", r.cold->to_running, r.cold->to_end, r.cold->failed, "");
  std::cout << "milliseconds from Launch() to RUNNING and to the end (" << r.isolation
            << " cgroups)\n"
            << t.Render();
  for (const bench::LatencyGroup& g : r.latency) {
    if (!g.first_error.empty()) std::cerr << "first error: " << g.first_error << std::endl;
  }
  if (r.throughput) PrintThroughput(*r.throughput, "containers");
  if (r.throughput_plain) PrintThroughput(*r.throughput_plain, "plain tasks");
  if (r.cold) {
    std::cout << absl::StrFormat("cold pull from %s: %s image, Launch -> RUNNING p50 %.0f ms",
                                 r.cold->source, FormatBytesApprox(r.cold->image_bytes),
                                 r.cold->to_running.p50);
    if (r.cold->load.count > 0) {
      std::cout << absl::StrFormat(" (of which the load into the cache %.0f ms)", r.cold->load.p50);
    }
    std::cout << std::endl;
    if (!r.cold->first_error.empty()) std::cerr << "first error: " << r.cold->first_error << "\n";
  } else {
    std::cout << "cold pull: skipped (" << r.cold_skipped << ")" << std::endl;
  }
  for (const bench::LatencyGroup& g : r.latency) {
    if (!g.container || g.to_end.count == 0 || g.command != "true") continue;
    std::cout << absl::StrFormat(
                     "warm container start (`true`): p50 %.1f ms from Launch() to its "
                     "end; the bar of 100 ms is %s",
                     g.to_end.p50, g.to_end.p50 <= 100 ? "met" : "NOT met")
              << std::endl;
  }
  std::cout << "load average: " << r.loadavg_start << " at the start, " << r.loadavg_end
            << " at the end" << std::endl;
}

}  // namespace

void RegisterContainerBench(CLI::App* bench, CommandContext& ctx) {
  static bench::ContainerBenchConfig c;
  static std::vector<std::string> commands;
  static std::string report_file;
  CLI::App* cmd = bench->add_subcommand(
      "containers",
      "container tasks on a real runtime with crun (root): warm start latency "
      "against plain tasks, 1,000 at once, a cold pull");
  cmd->add_option("--image-file", c.image_file,
                  "the image: an OCI layout dir or tar (scripts/make-test-image.sh)")
      ->required();
  cmd->add_option("--tag", c.image_ref, "the reference it is cached under")->capture_default_str();
  cmd->add_option("--runs", c.runs, "warm runs per command, container and plain each")
      ->capture_default_str();
  cmd->add_option("--warmup", c.warmup, "uncounted runs of each kind first")->capture_default_str();
  cmd->add_option("--command", commands,
                  "a task command for the warm runs (repeatable; default: true, echo hello)");
  cmd->add_option("--containers", c.containers,
                  "containers launched at once, then as many plain tasks (0: skip)")
      ->capture_default_str();
  cmd->add_option("--throughput-cpu-milli", c.throughput_cpu_milli,
                  "the cpu of each of them, in thousandths of a core")
      ->capture_default_str();
  cmd->add_option("--registry", c.registry, "HOST:PORT of the registry for the cold pull");
  cmd->add_option("--registry-ca", c.registry_ca, "a PEM file of CAs the pull trusts");
  cmd->add_option("--cold-image", c.cold_repository, "REPO:TAG of the cold image in the registry")
      ->capture_default_str();
  cmd->add_option("--cold-image-file", c.cold_image_file,
                  "without --registry: the cold image as an OCI layout, loaded by the agent");
  cmd->add_option("--cold-runs", c.cold_runs, "cold pulls, each into an empty cache (0: skip)")
      ->capture_default_str();
  cmd->add_option("--container-runtime", c.container_runtime, "the OCI runtime")
      ->capture_default_str();
  cmd->add_option("--work-dir", c.work_dir, "the agent's work dir (default: a temporary dir)");
  cmd->add_option("--report", report_file, "also write the JSON report to this file");
  cmd->callback([&ctx] {
    if (!commands.empty()) c.commands = commands;
    absl::StatusOr<bench::ContainerBenchReport> r = bench::RunContainerBench(c);
    if (!r.ok()) return ctx.Fail(r.status());
    if (EmitBenchReport(ctx, bench::ToJson(*r), report_file)) return;
    PrintReport(*r);
  });
}

}  // namespace paceline::cli
