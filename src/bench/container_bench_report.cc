// The container benchmark's report: latency summaries and the JSON of `paceline bench
// containers` (container_bench.h).

#include <algorithm>

#include "bench/container_bench.h"

namespace paceline::bench {

LatencySummary Summarize(std::vector<double> ms) {
  LatencySummary s;
  s.count = static_cast<int64_t>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double p) {
    return ms[static_cast<size_t>(p * static_cast<double>(ms.size() - 1))];
  };
  s.p50 = at(0.5);
  s.p99 = at(0.99);
  s.max = ms.back();
  double sum = 0;
  for (double x : ms) sum += x;
  s.mean = sum / static_cast<double>(ms.size());
  return s;
}

namespace {

nlohmann::json SummaryJson(const LatencySummary& s) {
  return {{"count", s.count},
          {"p50_ms", s.p50},
          {"p99_ms", s.p99},
          {"max_ms", s.max},
          {"mean_ms", s.mean}};
}

nlohmann::json CpuJson(const CpuPerRun& c) {
  nlohmann::json j = {{"agent_ms", c.agent_ms}, {"below_agent_ms", c.below_ms}};
  j["task_cgroups_ms"] = c.cgroups_ms >= 0 ? nlohmann::json(c.cgroups_ms) : nlohmann::json();
  return j;
}

}  // namespace

nlohmann::json ToJson(const ContainerBenchReport& r) {
  const ContainerBenchConfig& c = r.config;
  nlohmann::json j;
  j["benchmark"] = "containers";
  j["config"] = {{"image_file", c.image_file},
                 {"image_ref", c.image_ref},
                 {"commands", c.commands},
                 {"runs", c.runs},
                 {"warmup_runs", c.warmup},
                 {"latency_cpu_milli", c.latency_cpu_milli},
                 {"latency_memory_bytes", c.latency_memory_bytes},
                 {"containers", c.containers},
                 {"throughput_cpu_milli", c.throughput_cpu_milli},
                 {"throughput_memory_bytes", c.throughput_memory_bytes},
                 {"cold_runs", c.cold_runs},
                 {"registry", c.registry},
                 {"cold_repository", c.cold_repository},
                 {"cold_image_file", c.cold_image_file},
                 {"container_runtime", c.container_runtime}};
  j["isolation"] = r.isolation;
  j["image"] = {{"config_digest", r.image_digest}, {"bytes", r.image_bytes}};
  j["times"] =
      "milliseconds from the Launch() call to the runtime's RUNNING / terminal event "
      "(the event's timestamp); cpu in milliseconds per run";
  nlohmann::json latency = nlohmann::json::array();
  for (const LatencyGroup& g : r.latency) {
    latency.push_back({{"command", g.command},
                       {"kind", g.container ? "container" : "plain"},
                       {"launch_call", SummaryJson(g.launch_call)},
                       {"to_running", SummaryJson(g.to_running)},
                       {"to_end", SummaryJson(g.to_end)},
                       {"cpu_per_run", CpuJson(g.cpu)},
                       {"failed", g.failed},
                       {"first_error", g.first_error}});
  }
  j["warm_latency"] = latency;
  auto throughput = [](const ThroughputResult& t) -> nlohmann::json {
    return {{"tasks", t.tasks},
            {"wall_s", absl::ToDoubleSeconds(t.wall)},
            {"in_launch_calls_s", absl::ToDoubleSeconds(t.launching)},
            {"per_s", t.per_second},
            {"max_live", t.max_live},
            {"to_running", SummaryJson(t.to_running)},
            {"to_end", SummaryJson(t.to_end)},
            {"cpu_per_task", CpuJson(t.cpu)},
            {"failed", t.failed},
            {"first_error", t.first_error}};
  };
  if (r.throughput) j["throughput"] = throughput(*r.throughput);
  if (r.throughput_plain) j["throughput_plain"] = throughput(*r.throughput_plain);
  if (r.cold) {
    const ColdResult& c2 = *r.cold;
    j["cold_pull"] = {{"source", c2.source},
                      {"image_bytes", c2.image_bytes},
                      {"load", SummaryJson(c2.load)},
                      {"to_running", SummaryJson(c2.to_running)},
                      {"to_end", SummaryJson(c2.to_end)},
                      {"each_to_running_ms", c2.each_to_running_ms},
                      {"failed", c2.failed},
                      {"first_error", c2.first_error}};
  } else {
    j["cold_pull"] = {{"skipped", r.cold_skipped}};
  }
  j["wall_s"] = absl::ToDoubleSeconds(r.wall);
  j["loadavg"] = {{"start", r.loadavg_start}, {"end", r.loadavg_end}};
  return j;
}

}  // namespace paceline::bench
