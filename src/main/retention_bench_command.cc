// `paceline bench retention [--tasks N] [--span 7d] [--retain-terminal 12h] ...`: the retention
// benchmark (bench/retention_bench.h): finished tasks through the core, the SQLite store and the
// archive over simulated days; the store's size over time, the cost of retiring, a restart.

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/retention_bench.h"
#include "cli/table.h"
#include "common/units.h"
#include "main/commands.h"

namespace paceline::cli {
namespace {

std::string Ms(absl::Duration d) { return absl::StrFormat("%.2f", absl::ToDoubleMilliseconds(d)); }

void PrintReport(const bench::RetentionBenchReport& r) {
  Table samples(
      {"hour", "finished tasks", "live jobs", "live tasks", "live events", "store", "archive"});
  for (const bench::RetentionSample& s : r.samples) {
    samples.AddRow({absl::StrFormat("%.0f", absl::ToDoubleHours(s.at)),
                    absl::StrCat(s.finished_tasks), absl::StrCat(s.live_jobs),
                    absl::StrCat(s.live_tasks), absl::StrCat(s.live_events),
                    FormatBytesApprox(s.store_bytes), FormatBytesApprox(s.archive_bytes)});
  }
  std::cout << samples.Render() << "\n";
  Table costs({"what", "count", "p50 ms", "p99 ms", "max ms"});
  auto row = [&](const char* what, const bench::Distribution& d) {
    costs.AddRow({what, absl::StrCat(d.count), Ms(d.p50), Ms(d.p99), Ms(d.max)});
  };
  row("cycle, no retirement in the step", r.cycle_quiet);
  row("cycle, a retirement in the step", r.cycle_retiring);
  row("purge of a batch on the loop", r.purge_on_loop);
  row("a batch's store work", r.retire_on_store);
  row("a step's commit", r.commit);
  std::cout << costs.Render();
  std::cout << absl::StrFormat(
                   "%d tasks finished, %d jobs (%d tasks) archived; restart: %s ms (load %s ms) "
                   "with %d task records; %.0f s of wall time",
                   r.finished_tasks, r.archived_jobs, r.archived_tasks, Ms(r.restart),
                   Ms(r.restart_load), r.restart_tasks, absl::ToDoubleSeconds(r.wall))
            << std::endl;
}

}  // namespace

void RegisterRetentionBench(CLI::App* bench, CommandContext& ctx) {
  static bench::RetentionBenchConfig c;
  static std::string span = "7d", window = "12h", report_file;
  CLI::App* cmd = bench->add_subcommand(
      "retention", "finished tasks over simulated days: the store stays flat, retiring is cheap");
  cmd->add_option("--tasks", c.tasks, "tasks that finish over the span")->capture_default_str();
  cmd->add_option("--span", span, "simulated time")->capture_default_str();
  cmd->add_option("--retain-terminal", window, "the retention window")->capture_default_str();
  cmd->add_option("--job-size", c.job_size, "instances per job")->capture_default_str();
  cmd->add_option("--hosts", c.hosts, "hosts of 64 cpus")->capture_default_str();
  cmd->add_option("--data-dir", c.data_dir, "the store and archive (default: a temporary dir)");
  cmd->add_option("--report", report_file, "also write the JSON report to this file");
  cmd->callback([&ctx] {
    absl::StatusOr<absl::Duration> s = ParseDurationStrict(span);
    if (!s.ok()) return ctx.Fail(WithFlag(s.status(), "--span"));
    absl::StatusOr<absl::Duration> w = ParseDurationStrict(window);
    if (!w.ok()) return ctx.Fail(WithFlag(w.status(), "--retain-terminal"));
    c.span = *s;
    c.window = *w;
    c.sample_every = std::max(c.step, c.span / 42);
    c.sample_every = absl::Floor(c.sample_every, c.step);
    absl::StatusOr<bench::RetentionBenchReport> r = bench::RunRetentionBench(c);
    if (!r.ok()) return ctx.Fail(r.status());
    if (EmitBenchReport(ctx, bench::ToJson(*r), report_file)) return;
    PrintReport(*r);
  });
}

}  // namespace paceline::cli
