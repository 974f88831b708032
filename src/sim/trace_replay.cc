// Alibaba GPU trace replay as a scenario (see trace_replay.h).

#include "sim/trace_replay.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "spec/spec_validation.h"

namespace paceline::sim {
namespace {

constexpr const char* kNodeList = "openb_node_list_all_node.csv";
constexpr const char* kTaskList = "openb_pod_list_default.csv";

std::string Base(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

double AlibabaTraceInput::gpus() const {
  double n = 0;
  for (const AlibabaNode& node : nodes) n += node.gpus;
  return n;
}

Json AlibabaTraceInput::Summary() const {
  Json j = Json::object();
  j["format"] = "alibaba-gpu";
  j["node_file"] = Base(node_file);
  j["task_file"] = Base(task_file);
  j["nodes"] = nodes.size();
  j["gpu_nodes_only"] = gpu_nodes_only;
  j["gpus"] = gpus();
  j["tasks"] = tasks.size();
  return j;
}

absl::StatusOr<AlibabaTraceInput> LoadAlibabaTrace(const std::vector<std::string>& paths,
                                                   bool gpu_nodes_only) {
  AlibabaTraceInput in;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      if (in.node_file.empty()) in.node_file = (std::filesystem::path(p) / kNodeList).string();
      if (in.task_file.empty()) in.task_file = (std::filesystem::path(p) / kTaskList).string();
    } else if (absl::StrContains(Base(p), "node_list")) {
      in.node_file = p;
    } else if (absl::StrContains(Base(p), "pod_list")) {
      in.task_file = p;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          p, ": not a directory, a node list (*node_list*.csv) or a pod list (*pod_list*.csv)"));
    }
  }
  if (in.node_file.empty() || in.task_file.empty()) {
    return absl::InvalidArgumentError(
        "the Alibaba GPU trace needs a node list and a pod list (or the trace's directory)");
  }
  absl::StatusOr<std::vector<AlibabaNode>> nodes = ReadAlibabaNodes(in.node_file);
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<std::vector<AlibabaTask>> tasks = ReadAlibabaTasks(in.task_file);
  if (!tasks.ok()) return tasks.status();
  for (AlibabaNode& n : *nodes) {
    if (!gpu_nodes_only || n.gpus > 0) in.nodes.push_back(std::move(n));
  }
  if (in.nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(in.node_file, ": no nodes to simulate"));
  }
  in.tasks = std::move(*tasks);
  in.gpu_nodes_only = gpu_nodes_only;
  in.description = absl::StrCat("alibaba-gpu: ", Base(in.node_file), " + ", Base(in.task_file));
  return in;
}

absl::StatusOr<Scenario> TraceScenario(const AlibabaTraceInput& input, const TraceReplayOptions& o,
                                       size_t* skipped) {
  Scenario sc;
  sc.seed = o.seed;
  sc.placement = o.placement;
  sc.cycle_every = o.cycle_every;
  sc.heartbeat_every = o.heartbeat_every;
  for (const AlibabaNode& n : input.nodes) {
    HostGroup g;
    g.name = n.name;
    g.exact_name = true;
    g.resources = n.capacity();
    g.gpu_model = n.gpus > 0 ? (n.model.empty() ? "gpu" : n.model) : "";
    sc.hosts.push_back(std::move(g));
  }
  sc.pools["/trace"] = PoolSpec();
  int64_t last = 0;
  size_t left_out = 0;
  for (const AlibabaTask& t : input.tasks) {
    if (t.creation_time < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(input.task_file,
                       ": the task list has no creation_time column, so it cannot be replayed "
                       "over time; use it with --fill"));
    }
    ScenarioJob j;
    j.at = absl::Seconds(t.creation_time);
    j.pool = "/trace";
    j.spec.name = t.name;
    j.spec.instances = 1;
    j.spec.task.command = "simulated";
    j.spec.task.resources = t.resources();
    j.spec.task.gpu_models = t.gpu_models;
    if (t.deletion_time > t.creation_time) {
      j.spec.task.duration = absl::Seconds(t.deletion_time - t.creation_time);
    }
    if (!ValidateJobSpec(j.spec).empty()) {
      ++left_out;
      continue;
    }
    last = std::max({last, t.creation_time, t.deletion_time});
    sc.jobs.push_back(std::move(j));
  }
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(),
                   [](const ScenarioJob& a, const ScenarioJob& b) { return a.at < b.at; });
  sc.run_for = o.run_for != absl::InfiniteDuration() ? o.run_for : absl::Seconds(last + 1);
  // Arrivals after run_for never happen.
  while (!sc.jobs.empty() && sc.jobs.back().at > sc.run_for) sc.jobs.pop_back();
  // About 200 report intervals, in whole cycles.
  int64_t cycles = std::max<int64_t>(1, (sc.run_for / sc.cycle_every) / 200);
  sc.report_every = sc.cycle_every * cycles;
  if (skipped != nullptr) *skipped = left_out;
  return sc;
}

}  // namespace paceline::sim
