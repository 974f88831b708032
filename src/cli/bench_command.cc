// `paceline bench api [--clients N] [--duration D] [--report FILE]`: the API benchmark
// (bench/api_bench.h). Against the master named by --addr/--token (or PACELINE_ADDR ...) when
// --remote is given; otherwise against a master started in this process on a temporary store.

#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/api_bench.h"
#include "cli/client_config.h"
#include "cli/context.h"
#include "cli/table.h"
#include "common/units.h"

namespace paceline::cli {

void RegisterBenchCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* bench = app.add_subcommand("bench", "whole-system benchmarks with a JSON report");
  bench->require_subcommand(1);
  static int clients = 100;
  static std::string duration = "10s";
  static std::string report;
  static bool remote = false;
  CLI::App* api = bench->add_subcommand(
      "api", "concurrent clients creating, getting and listing jobs: requests/s and latency");
  api->add_option("--clients", clients, "concurrent clients")->capture_default_str();
  api->add_option("--duration", duration, "how long, e.g. 10s")->capture_default_str();
  api->add_option("--report", report, "also write the JSON report to this file");
  api->add_flag("--remote", remote,
                "benchmark the master of --addr/--token instead of one started here");
  api->callback([&ctx] {
    absl::StatusOr<absl::Duration> d = ParseDurationStrict(duration);
    if (!d.ok()) return ctx.Fail(WithFlag(d.status(), "--duration"));
    bench::ApiBenchConfig config;
    config.clients = clients;
    config.duration = *d;
    if (remote) {
      absl::StatusOr<ResolvedClient> client = ResolveClient(ctx.client);
      if (!client.ok()) return ctx.Fail(client.status());
      config.addr = client->addr;
      config.token = client->token;
    }
    absl::StatusOr<bench::ApiBenchReport> r = bench::RunApiBench(config);
    if (!r.ok()) return ctx.Fail(r.status());
    nlohmann::json j = bench::ToJson(*r);
    if (!report.empty()) std::ofstream(report) << j.dump(2) << "\n";
    if (ctx.client.format() == OutputFormat::kJson) {
      std::cout << j.dump(2) << std::endl;
      return;
    }
    Table t({"call", "ok", "errors", "per second", "p50 ms", "p90 ms", "p99 ms", "max ms"});
    for (const bench::CallStats& c : r->calls) {
      t.AddRow({c.call, absl::StrCat(c.ok), absl::StrCat(c.errors),
                absl::StrFormat("%.0f", c.per_second), absl::StrFormat("%.2f", c.p50_ms),
                absl::StrFormat("%.2f", c.p90_ms), absl::StrFormat("%.2f", c.p99_ms),
                absl::StrFormat("%.2f", c.max_ms)});
    }
    std::cout << t.Render();
    std::cout << absl::StrFormat("%d clients, %.1f s: %.0f requests/s in all", clients,
                                 absl::ToDoubleSeconds(r->wall), r->total_per_second)
              << std::endl;
    for (const bench::CallStats& c : r->calls) {
      if (!c.first_error.empty()) std::cerr << "first error: " << c.first_error << std::endl;
    }
  });
}

}  // namespace paceline::cli
