// Fill mode (see fill.h). Moved here from the placement trace replay tool, which now calls it.

#include "sim/fill.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/status.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "placement/plan.h"
#include "placement/profile.h"
#include "sim/paper/paper_fill.h"
#include "sim/paper/paper_policies.h"

namespace paceline::sim {
namespace {

using placement::ClusterSnapshot;

double ClusterFragmentation(const ClusterSnapshot& snap, const placement::GpuWorkload& w) {
  double f = 0;
  for (uint32_t s = 0; s < snap.slots(); ++s) {
    if (snap.present(s)) f += w.Fragmentation(snap.host_at(s));
  }
  return f;
}

double GpuCapacity(const std::vector<AlibabaNode>& nodes) {
  double c = 0;
  for (const AlibabaNode& n : nodes) c += 1000.0 * n.gpus;
  return c;
}

Json MeanStd(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(std::max<size_t>(1, v.size()));
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  double sd = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0;
  Json j = Json::object();
  j["mean"] = std::round(mean * 1e4) / 1e4;
  j["std"] = std::round(sd * 1e4) / 1e4;
  return j;
}

// The unallocated GPU at 100 % arrived over the runs: mean, std, stderr and every seed's value;
// null when no run has a point at 100 %.
Json UnallocatedAt100(const std::vector<const FillRun*>& runs) {
  std::vector<double> values;
  Json seeds = Json::array();
  for (const FillRun* r : runs) {
    for (const FillPoint& q : r->points) {
      if (std::abs(q.arrived_pct - 100) > 1e-9) continue;
      values.push_back(q.unallocated_pct);
      seeds.push_back({{"seed", r->seed}, {"unallocated_pct", q.unallocated_pct}});
    }
  }
  if (values.empty()) return Json();
  Json a = MeanStd(values);
  a["stderr"] = std::round(a["std"].get<double>() / std::sqrt(values.size()) * 1e4) / 1e4;
  a["seeds"] = std::move(seeds);
  return a;
}

}  // namespace

ClusterSnapshot FillCluster(const std::vector<AlibabaNode>& nodes, std::span<const size_t> order) {
  ClusterSnapshot snap;
  const size_t n = order.empty() ? nodes.size() : order.size();
  for (uint32_t slot = 0; slot < n; ++slot) {
    const AlibabaNode& node = nodes[order.empty() ? slot : order[slot]];
    placement::HostSpec h;
    h.id = HostId(slot);
    h.name = node.name;
    h.capacity = node.capacity();
    h.gpu_models.assign(static_cast<size_t>(node.gpus), node.model);
    absl::Status s = snap.AddHost(std::move(h));
    PL_CHECK(s.ok()) << s;
  }
  return snap;
}

absl::StatusOr<FillWorkload> FillWorkload::Build(const std::vector<AlibabaTask>& tasks) {
  FillWorkload w;
  std::map<std::string, std::shared_ptr<const placement::TaskShape>> by_type;
  for (const AlibabaTask& t : tasks) {
    w.distribution.Add(t.resources(), t.gpu_models);
    std::string key = absl::StrCat(t.resources().ToString(), "|", absl::StrJoin(t.gpu_models, ","));
    auto& shape = by_type[key];
    if (shape == nullptr) {
      placement::TaskShape s;
      s.job = JobId(by_type.size());
      s.resources = t.resources();
      s.gpu_models = t.gpu_models;
      absl::StatusOr<std::shared_ptr<const placement::TaskShape>> made =
          placement::MakeTaskShape(std::move(s));
      if (!made.ok()) return WithContext(made.status(), absl::StrCat("task ", t.name));
      shape = *made;
    }
    w.tasks.push_back(shape);
  }
  if (w.tasks.empty()) return absl::InvalidArgumentError("the task list is empty");
  w.types = by_type.size();
  return w;
}

absl::StatusOr<placement::EngineConfig> FillEngineConfig(const std::string& profile, uint64_t seed,
                                                         const placement::GpuWorkload& workload,
                                                         std::optional<uint32_t> max_candidates) {
  absl::StatusOr<placement::ProfileSpec> spec = placement::ProfileSpecFromText(profile);
  if (!spec.ok()) return WithContext(spec.status(), "--profiles");
  placement::EngineConfig c;
  c.custom_profile = std::move(*spec);
  c.max_candidates = max_candidates;
  c.seed = seed;
  c.workload = workload;
  return c;
}

FillRun FillOnce(const std::vector<AlibabaNode>& nodes, const FillWorkload& workload,
                 const std::string& profile, uint64_t seed, const FillOptions& o) {
  ClusterSnapshot snap = FillCluster(nodes);
  const double capacity = GpuCapacity(nodes);
  absl::StatusOr<placement::EngineConfig> c =
      FillEngineConfig(profile, seed, workload.distribution, o.max_candidates);
  PL_CHECK(c.ok()) << c.status();
  auto engine = placement::PlacementEngine::Create(*c);
  PL_CHECK(engine.ok()) << engine.status();

  std::mt19937_64 rng(seed);
  std::vector<std::shared_ptr<const placement::TaskShape>> order = workload.tasks;
  std::shuffle(order.begin(), order.end(), rng);
  std::uniform_int_distribution<size_t> pick(0, order.size() - 1);
  FillRun run;
  run.profile = profile;
  run.seed = seed;
  double arrived_gpu = 0;
  double allocated_gpu = 0;
  int bucket = 1;
  const int buckets = static_cast<int>(std::floor(o.target_percent / o.bucket_percent + 1e-9));
  uint32_t instance = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<placement::PlacementRequest> one(1);
  while (bucket <= buckets) {
    const auto& shape = order[pick(rng)];
    arrived_gpu += static_cast<double>(shape->gpu_milli());
    ++run.arrived;
    one[0] = placement::PlacementRequest::Single({TaskId{shape->job, instance++}, shape, {}, {}});
    placement::Plan plan = (*engine)->Place(one, snap);
    if (plan.assignments.empty()) {
      ++run.failed;
      run.failed_gpu_tasks += shape->gpu_milli() > 0;
    } else {
      placement::ApplyResult r = placement::ApplyPlan(plan, snap);
      PL_CHECK(r.committed == 1);
      allocated_gpu += static_cast<double>(shape->gpu_milli());
    }
    while (bucket <= buckets && arrived_gpu >= capacity * bucket * o.bucket_percent / 100.0) {
      run.points.push_back(FillPoint{
          bucket * o.bucket_percent, 100.0 * (1 - allocated_gpu / capacity),
          100.0 * ClusterFragmentation(snap, workload.distribution) / capacity, run.failed});
      ++bucket;
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.allocated_pct = 100.0 * allocated_gpu / capacity;
  PL_CHECK(snap.Validate().ok());
  return run;
}

std::vector<std::string> DefaultFillProfiles(const std::string& protocol) {
  if (protocol == "fgd") return paper::ProtocolProfiles();
  return {"default", "fgd", "best-fit", "random-fit", "dot-product", "gpu-packing"};
}

absl::StatusOr<std::vector<FillRun>> RunFillRuns(const std::vector<AlibabaNode>& nodes,
                                                 const std::vector<AlibabaTask>& tasks,
                                                 const FillOptions& o) {
  if (o.protocol != "paceline" && o.protocol != "fgd") {
    return absl::InvalidArgumentError(
        absl::StrCat("--protocol: unknown protocol '", o.protocol, "'; expected paceline or fgd"));
  }
  if (o.profiles.empty()) return absl::InvalidArgumentError("--profiles: none given");
  const bool paper = o.protocol == "fgd";
  for (const std::string& p : o.profiles) {
    if (paper && paper::ParsePolicy(p).ok()) continue;
    absl::Status s = FillEngineConfig(p, 1, placement::GpuWorkload()).status();
    if (!s.ok() && paper) {
      return absl::Status(s.code(), absl::StrCat(s.message(), "; or one of the paper's: ",
                                                 absl::StrJoin(paper::PolicyNames(), ", ")));
    }
    if (!s.ok()) return s;
  }
  if (GpuCapacity(nodes) <= 0) {
    return absl::InvalidArgumentError("fill mode needs GPUs, and the cluster has none");
  }
  // The trace, prepared once for every run of the protocol asked for.
  std::optional<paper::PaperTrace> trace;
  std::optional<FillWorkload> workload;
  if (paper) {
    absl::StatusOr<paper::PaperTrace> t = paper::PaperTrace::Build(nodes, tasks);
    if (!t.ok()) return t.status();
    trace = std::move(*t);
  } else {
    absl::StatusOr<FillWorkload> w = FillWorkload::Build(tasks);
    if (!w.ok()) return w.status();
    workload = std::move(*w);
  }
  std::vector<FillRun> runs;
  for (const std::string& p : o.profiles) {
    for (int r = 0; r < o.repetitions; ++r) {
      const uint64_t seed = o.seed + static_cast<uint64_t>(r);
      runs.push_back(
          paper ? paper::RunProtocolOnce(*trace, p, seed, o.target_percent, o.max_candidates)
                : FillOnce(nodes, *workload, p, seed, o));
    }
  }
  return runs;
}

Json FillReport(const AlibabaTraceInput& input, const FillOptions& o,
                const std::vector<FillRun>& runs) {
  Json report = Json::object();
  report["mode"] = "fill";
  report["trace"] = input.Summary();
  Json& opts = report["options"];
  opts["seed"] = o.seed;
  opts["repetitions"] = o.repetitions;
  opts["target_pct"] = o.target_percent;
  opts["bucket_pct"] = o.bucket_percent;
  opts["profiles"] = o.profiles;
  opts["protocol"] = o.protocol;
  if (o.max_candidates) {
    opts["max_candidates"] = *o.max_candidates;
  } else {
    opts["max_candidates"] = "profile";
  }
  Json profiles = Json::object();
  Json timing = Json::object();
  for (const std::string& p : o.profiles) {
    std::vector<const FillRun*> rs;
    for (const FillRun& r : runs) {
      if (r.profile == p) rs.push_back(&r);
    }
    size_t n = rs.empty() ? 0 : rs[0]->points.size();
    Json buckets = Json::array();
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> un, frag, failed;
      for (const FillRun* r : rs) {
        un.push_back(r->points[i].unallocated_pct);
        frag.push_back(r->points[i].fragmentation_pct);
        failed.push_back(static_cast<double>(r->points[i].failed));
      }
      Json b = Json::object();
      b["arrived_pct"] = rs[0]->points[i].arrived_pct;
      b["unallocated_pct"] = MeanStd(un);
      b["failed"] = MeanStd(failed);
      b["fragmentation_pct"] = MeanStd(frag);
      buckets.push_back(std::move(b));
    }
    std::vector<double> alloc, arrived, failed, failed_gpu, secs;
    for (const FillRun* r : rs) {
      alloc.push_back(r->allocated_pct);
      arrived.push_back(static_cast<double>(r->arrived));
      failed.push_back(static_cast<double>(r->failed));
      failed_gpu.push_back(static_cast<double>(r->failed_gpu_tasks));
      secs.push_back(r->seconds);
    }
    Json pj = Json::object();
    pj["buckets"] = std::move(buckets);
    Json& fin = pj["final"];
    fin["gpu_allocated_pct"] = MeanStd(alloc);
    fin["tasks_arrived"] = MeanStd(arrived);
    fin["failed"] = MeanStd(failed);
    fin["failed_gpu_tasks"] = MeanStd(failed_gpu);
    Json at100 = UnallocatedAt100(rs);
    if (!at100.is_null()) fin["unallocated_at_100_pct"] = std::move(at100);
    profiles[p] = std::move(pj);
    timing[p] = MeanStd(secs)["mean"];
  }
  report["profiles"] = std::move(profiles);
  report["timing"]["seconds_per_run"] = std::move(timing);
  return report;
}

absl::StatusOr<Json> RunFill(const AlibabaTraceInput& input, const FillOptions& options) {
  FillOptions o = options;
  if (o.profiles.empty()) o.profiles = DefaultFillProfiles(o.protocol);
  absl::StatusOr<std::vector<FillRun>> runs = RunFillRuns(input.nodes, input.tasks, o);
  if (!runs.ok()) return runs.status();
  return FillReport(input, o, *runs);
}

std::string FillSummaryText(const Json& report) {
  const Json& t = report["trace"];
  const Json& o = report["options"];
  std::string out = absl::StrFormat(
      "fill (%s protocol): %d nodes, %.0f GPUs (%s), %d tasks (%s); %d repetition(s) from seed "
      "%d; until %.0f%% of GPU capacity arrived\n",
      o["protocol"].get<std::string>(), t["nodes"].get<int64_t>(), t["gpus"].get<double>(),
      t["node_file"].get<std::string>(), t["tasks"].get<int64_t>(),
      t["task_file"].get<std::string>(), o["repetitions"].get<int64_t>(), o["seed"].get<uint64_t>(),
      o["target_pct"].get<double>());
  std::vector<std::string> profiles = o["profiles"].get<std::vector<std::string>>();
  for (const char* measure : {"unallocated_pct", "fragmentation_pct", "failed"}) {
    absl::StrAppendFormat(&out, "\n%s (mean over repetitions)\n%-10s", measure, "arrived %");
    for (const std::string& p : profiles) absl::StrAppendFormat(&out, " %12s", p);
    absl::StrAppend(&out, "\n");
    const Json& first = report["profiles"][profiles[0]]["buckets"];
    for (size_t i = 0; i < first.size(); ++i) {
      double arrived = first[i]["arrived_pct"].get<double>();
      if (std::fmod(arrived + 1e-9, 10.0) > 1e-6 && i + 1 != first.size()) continue;
      absl::StrAppendFormat(&out, "%-10g", arrived);
      for (const std::string& p : profiles) {
        absl::StrAppendFormat(&out, " %12.1f",
                              report["profiles"][p]["buckets"][i][measure]["mean"].get<double>());
      }
      absl::StrAppend(&out, "\n");
    }
  }
  absl::StrAppendFormat(&out, "\n%-18s %16s %18s %14s %10s %10s\n", "PROFILE", "GPU ALLOCATED %",
                        "UNALLOC @100% (SE)", "TASKS ARRIVED", "FAILED", "S PER RUN");
  for (const std::string& p : profiles) {
    const Json& f = report["profiles"][p]["final"];
    std::string at100 = "-";
    if (f.contains("unallocated_at_100_pct")) {
      const Json& a = f["unallocated_at_100_pct"];
      at100 = absl::StrFormat("%.2f (%.2f)", a["mean"].get<double>(), a["stderr"].get<double>());
    }
    absl::StrAppendFormat(&out, "%-18s %16.1f %18s %14.0f %10.0f %10.2f\n", p,
                          f["gpu_allocated_pct"]["mean"].get<double>(), at100,
                          f["tasks_arrived"]["mean"].get<double>(),
                          f["failed"]["mean"].get<double>(),
                          report["timing"]["seconds_per_run"][p].get<double>());
  }
  return out;
}

}  // namespace paceline::sim
