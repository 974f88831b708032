// `paceline bench api [--clients N] [--duration D] [--report FILE]`: the API benchmark
// (bench/api_bench.h). Against the master named by --addr/--token (or PACELINE_ADDR ...) when
// --remote is given; otherwise against a master started in this process on a temporary store.
// `paceline bench scale [--transport inproc|grpc] [--hosts N] [--tasks N] ...`: the scale
// benchmark (bench/scale_bench.h): one master, many emulated hosts. `paceline bench fleet`:
// fleet_command.cc.

#include <algorithm>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/api_bench.h"
#include "bench/local_master.h"
#include "bench/scale_bench.h"
#include "cli/client_config.h"
#include "cli/table.h"
#include "common/units.h"
#include "main/commands.h"

namespace paceline::cli {

namespace {

// "10:0.1,100:0.2" -> {{10, 0.1}, {100, 0.2}}.
absl::StatusOr<std::vector<std::pair<uint32_t, double>>> ParseJobMix(const std::string& text) {
  std::vector<std::pair<uint32_t, double>> mix;
  double total = 0;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    uint32_t size = 0;
    double share = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &size) || size == 0 ||
        !absl::SimpleAtod(kv[1], &share) || share <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--job-mix: '", part, "'; expected SIZE:SHARE, e.g. 10:0.1,1000:0.9"));
    }
    mix.emplace_back(size, share);
    total += share;
  }
  if (total > 1.0001) {
    return absl::InvalidArgumentError("--job-mix: the shares add up to more than 1");
  }
  std::sort(mix.begin(), mix.end());
  return mix;
}

void PrintScaleReport(const bench::ScaleBenchReport& r) {
  auto mib = [](int64_t b) {
    return absl::StrFormat("%.0f MiB", static_cast<double>(b) / (1 << 20));
  };
  Table t({"measure", "value"});
  t.AddRow({"hosts", absl::StrFormat("%d (%s), registered in %.1f s", r.config.hosts,
                                     r.config.transport == bench::FleetTransport::kInProcess
                                         ? "in-process agent links"
                                         : "gRPC agent streams",
                                     absl::ToDoubleSeconds(r.register_time))});
  t.AddRow({"tasks running", absl::StrFormat("%d in %d jobs", r.running, r.jobs)});
  t.AddRow({"submitted -> running",
            absl::StrFormat("%.0f tasks/s overall, %.0f tasks/s sustained (10-90 %%)",
                            r.tasks_per_second, r.sustained_tasks_per_second)});
  t.AddRow(
      {"latency p50 / p90 / p99 / max",
       absl::StrFormat("%.0f / %.0f / %.0f / %.0f ms", r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms)});
  t.AddRow(
      {"submit (CreateJob) time", absl::StrFormat("%.1f s", absl::ToDoubleSeconds(r.submit_time))});
  std::string memory = absl::StrFormat("%s -> %s: %.0f bytes per task", mib(r.rss_before),
                                       mib(r.rss_after), r.bytes_per_task);
  if (r.fleet_bytes > 0) {
    absl::StrAppendFormat(&memory, " (%.0f without the emulated hosts' %s)",
                          r.master_bytes_per_task, mib(r.fleet_bytes));
  }
  t.AddRow({"memory", memory});
  const std::map<std::string, double> us = bench::CpuUsPerTask(r);
  std::string cpu = absl::StrFormat("%.1f us", us.at("total"));
  std::string sep = " (";
  for (const char* role : {"loop", "writer", "fleet", "clients", "other"}) {
    auto it = us.find(role);
    if (it == us.end()) continue;
    absl::StrAppendFormat(&cpu, "%s%s %.1f", sep, role, it->second);
    sep = ", ";
  }
  if (sep == ", ") cpu += ")";
  t.AddRow({"cpu per task", cpu});
  t.AddRow({"scheduling cycles",
            absl::StrFormat("%d; mean %.2f ms, p50 <= %.2f ms, p99 <= %.2f ms; longest since "
                            "the master started %.1f ms",
                            r.cycles.count, absl::ToDoubleMilliseconds(r.cycles.Mean()),
                            absl::ToDoubleMilliseconds(r.cycles.Quantile(0.5)),
                            absl::ToDoubleMilliseconds(r.cycles.Quantile(0.99)),
                            absl::ToDoubleMilliseconds(r.cycles.max))});
  auto calls = [](const bench::CallLatency& c) {
    return absl::StrFormat("p50 %.1f / p99 %.1f / max %.1f ms (%d calls)", c.p50_ms, c.p99_ms,
                           c.max_ms, c.calls);
  };
  t.AddRow({"job list during the run", calls(r.job_list)});
  t.AddRow({"task list during the run", calls(r.task_list)});
  t.AddRow(
      {"store commits", absl::StrFormat("%d transactions for %d batches; mean %.2f ms, "
                                        "p50 <= %.2f ms, p99 <= %.2f ms, max %.1f ms; %s",
                                        r.commits, r.batches, r.commit_mean_ms, r.commit_p50_ms,
                                        r.commit_p99_ms, r.commit_max_ms, mib(r.store_bytes))});
  if (r.config.restart) {
    t.AddRow({"restart", absl::StrFormat("serving after %.2f s, all hosts back after %.2f s; "
                                         "%d tasks RUNNING",
                                         absl::ToDoubleSeconds(r.restart_serving),
                                         absl::ToDoubleSeconds(r.restart_registered),
                                         r.running_after_restart)});
  }
  if (r.submit_errors > 0) {
    t.AddRow({"submit errors", absl::StrCat(r.submit_errors, ", first: ", r.first_error)});
  }
  std::cout << t.Render();
}

void RegisterScaleBench(CLI::App* bench, CommandContext& ctx) {
  static bench::ScaleBenchConfig c;
  static std::string transport = "inproc", mix = "10:0.1,100:0.2,1000:0.4,5000:0.3";
  static std::string timeout = "20m", heartbeat = "10s", report_file;
  static bool no_restart = false;
  static bool no_batches = false;
  static int host_cpus = 32;
  CLI::App* scale = bench->add_subcommand(
      "scale", "one master, many emulated hosts, a million tasks: tasks/s, latency, memory");
  scale
      ->add_option("--transport", transport,
                   "inproc: hosts attached in this process; grpc: a gRPC stream per host")
      ->capture_default_str();
  scale->add_option("--hosts", c.hosts, "emulated hosts (--host-cpus each, and 4Gi per cpu)")
      ->capture_default_str();
  scale
      ->add_option("--host-cpus", host_cpus,
                   "cpus of each emulated host (1 to 1024), with 4Gi of memory per cpu")
      ->capture_default_str();
  scale->add_option("--tasks", c.tasks, "tasks of 1 cpu, 1Gi")->capture_default_str();
  scale->add_option("--job-mix", mix, "job sizes and their share of the tasks")
      ->capture_default_str();
  scale->add_option("--clients", c.clients, "concurrent CreateJob callers")->capture_default_str();
  scale->add_option("--fleet-threads", c.fleet_threads, "threads driving the emulated hosts")
      ->capture_default_str();
  scale->add_option("--heartbeat-interval", heartbeat, "asked of the hosts")->capture_default_str();
  scale->add_option("--timeout", timeout, "for every task to run")->capture_default_str();
  scale->add_option("--seed", c.seed, "job order")->capture_default_str();
  scale->add_option("--data-dir", c.data_dir, "the master's store (default: a temporary dir)");
  scale->add_option("--store", c.store,
                    "the master's store: postgres://... (an empty database) instead of SQLite in "
                    "the data dir");
  scale->add_flag("--no-restart", no_restart, "skip the master restart at the end");
  scale->add_flag("--no-batches", no_batches,
                  "emulated hosts send and take every agent message alone, as agents older than "
                  "batches do");
  scale->add_option("--report", report_file, "also write the JSON report to this file");
  scale->callback([&ctx] {
    if (transport == "inproc") {
      c.transport = bench::FleetTransport::kInProcess;
    } else if (transport == "grpc") {
      c.transport = bench::FleetTransport::kGrpc;
    } else {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--transport: '", transport, "'; expected inproc or grpc")));
    }
    if (host_cpus < 1 || host_cpus > 1024) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--host-cpus: ", host_cpus, "; expected 1 to 1024")));
    }
    c.host_cpu_milli = int64_t{host_cpus} * 1000;
    // 4Gi per cpu (128Gi for the default 32): memory never binds before cpus do, so that every
    // task of 1 cpu / 1Gi fits when --tasks is at most --host-cpus x --hosts.
    c.host_memory_bytes = int64_t{host_cpus} * (int64_t{4} << 30);
    absl::StatusOr<std::vector<std::pair<uint32_t, double>>> m = ParseJobMix(mix);
    if (!m.ok()) return ctx.Fail(m.status());
    c.job_mix = *m;
    absl::StatusOr<absl::Duration> t = ParseDurationStrict(timeout);
    if (!t.ok()) return ctx.Fail(WithFlag(t.status(), "--timeout"));
    c.timeout = *t;
    absl::StatusOr<absl::Duration> hb = ParseDurationStrict(heartbeat);
    if (!hb.ok()) return ctx.Fail(WithFlag(hb.status(), "--heartbeat-interval"));
    c.heartbeat_interval = *hb;
    c.host_timeout = std::max(c.host_timeout, 6 * *hb);
    c.restart = !no_restart;
    c.batches = !no_batches;
    absl::StatusOr<bench::ScaleBenchReport> r = bench::RunScaleBench(c);
    if (!r.ok()) return ctx.Fail(r.status());
    if (EmitBenchReport(ctx, bench::ToJson(*r), report_file)) return;
    PrintScaleReport(*r);
  });
}

}  // namespace

bool EmitBenchReport(CommandContext& ctx, nlohmann::json report, const std::string& file) {
  report["machine"] = bench::MachineJson();
  if (!file.empty()) std::ofstream(file) << report.dump(2) << "\n";
  if (ctx.client.format() != OutputFormat::kJson) return false;
  std::cout << report.dump(2) << std::endl;
  return true;
}

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
    if (EmitBenchReport(ctx, bench::ToJson(*r), report)) return;
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
  RegisterScaleBench(bench, ctx);
  RegisterFleetBench(bench, ctx);
  RegisterRetentionBench(bench, ctx);
  RegisterContainerBench(bench, ctx);
}

}  // namespace paceline::cli
