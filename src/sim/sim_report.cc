// BuildReport / SummaryText (see sim_report.h).

#include "sim/sim_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/units.h"

namespace paceline::sim {
namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

std::vector<Dim> ReportedDims(const Resources& capacity) {
  std::vector<Dim> dims;
  for (Dim d : kAllDims) {
    if (capacity[d] > 0) dims.push_back(d);
  }
  return dims;
}

Json ResourcesJson(const Resources& r, const std::vector<Dim>& dims) {
  Json j = Json::object();
  for (Dim d : dims) j[std::string(DimName(d))] = DimValue(d, r[d]);
  return j;
}

Json LatencyJson(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Json j = Json::object();
  j["count"] = v.size();
  j["p50"] = Percentile(v, 50);
  j["p90"] = Percentile(v, 90);
  j["p99"] = Percentile(v, 99);
  j["max"] = v.empty() ? 0.0 : v.back();
  return j;
}

bool IsLeaf(const std::map<std::string, PoolSample>& pools, const std::string& path) {
  auto it = pools.upper_bound(path);
  std::string prefix = path == "/" ? "/" : path + "/";
  return it == pools.end() || it->first.compare(0, prefix.size(), prefix) != 0;
}

// Rounds to 1e-6 so that the JSON does not depend on how a compiler folds the arithmetic.
double Round(double v) { return std::round(v * 1e6) / 1e6; }

}  // namespace

Json DimValue(Dim d, int64_t value) {
  if (value == kUnlimited) return nullptr;
  if (d == Dim::kCpu || d == Dim::kGpu) return static_cast<double>(value) / kMilliPerUnit;
  return value;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Json BuildReport(const Scenario& sc, const SimResult& r, const std::string& source) {
  const std::vector<Dim> dims = ReportedDims(r.capacity);
  Json report = Json::object();

  Json& s = report["scenario"];
  s["source"] = source;
  s["seed"] = sc.seed;
  s["hosts"] = r.hosts;
  s["capacity"] = ResourcesJson(r.capacity, dims);
  s["pools"] = sc.pools.size();
  s["jobs"] = sc.jobs.size();
  s["run_for_s"] =
      sc.run_for == absl::InfiniteDuration() ? Json(nullptr) : Json(Seconds(sc.run_for));
  s["report_every_s"] = Seconds(sc.report_every);
  s["cycle_every_s"] = Seconds(sc.cycle_every);
  s["heartbeat_every_s"] = Seconds(sc.heartbeat_every);
  s["start_delay_s"] = Seconds(sc.start_delay);
  s["placement"] = sc.placement;
  s["backfill"] = sc.backfill;

  // Fairness and utilisation accumulate over the intervals.
  std::vector<double> util_sum(kNumDims, 0), dev_sum(kNumDims, 0), dev_max(kNumDims, 0);
  double dom_sum = 0, dom_max = 0;  // on each pool's dominant dimension
  size_t dev_count = 0;
  Json intervals = Json::array();
  for (const IntervalSample& iv : r.intervals) {
    Json j = Json::object();
    j["t_s"] = Seconds(iv.t);
    Json pools = Json::object();
    for (const auto& [path, p] : iv.pools) {
      Json pj = Json::object();
      for (Dim d : dims) {
        Json dj = Json::object();
        dj["reservation"] = DimValue(d, p.reservation[d]);
        dj["limit"] = DimValue(d, p.limit[d]);
        dj["entitlement"] = DimValue(d, p.entitlement[d]);
        dj["allocation"] = DimValue(d, p.allocation[d]);
        dj["demand"] = DimValue(d, p.demand[d]);
        pj[std::string(DimName(d))] = std::move(dj);
      }
      pools[path] = std::move(pj);
      if (path != "/" && IsLeaf(iv.pools, path)) {
        double dominant_share = -1, dominant_pct = 0;
        for (Dim d : dims) {
          double cap = static_cast<double>(r.capacity[d]);
          double gap = std::abs(static_cast<double>(p.allocation[d]) -
                                static_cast<double>(std::min(p.entitlement[d], p.demand[d])));
          double pct = 100.0 * gap / cap;
          dev_sum[static_cast<int>(d)] += pct;
          dev_max[static_cast<int>(d)] = std::max(dev_max[static_cast<int>(d)], pct);
          double share = static_cast<double>(p.demand[d]) / cap;
          if (share > dominant_share) dominant_share = share, dominant_pct = pct;
        }
        dom_sum += dominant_pct;
        dom_max = std::max(dom_max, dominant_pct);
        ++dev_count;
      }
    }
    j["pools"] = std::move(pools);
    Json tasks = Json::object();
    for (int st = 0; st < kNumTaskStates; ++st) {
      tasks[std::string(TaskStateName(TaskState(st)))] = iv.tasks[st];
    }
    j["tasks"] = std::move(tasks);
    j["placements"] = iv.placements;
    j["preemptions"] = iv.preemptions;
    j["jobs_arrived"] = iv.jobs_arrived;
    Json util = Json::object();
    for (Dim d : dims) {
      double u = static_cast<double>(iv.allocated[d]) / static_cast<double>(r.capacity[d]);
      util[std::string(DimName(d))] = Round(u);
      util_sum[static_cast<int>(d)] += u;
    }
    j["utilisation"] = std::move(util);
    intervals.push_back(std::move(j));
  }

  Json jobs = Json::array();
  std::vector<double> all_latencies;
  std::optional<absl::Duration> makespan = absl::ZeroDuration();
  for (const JobOutcome& o : r.jobs) {
    Json j = Json::object();
    j["id"] = o.id;
    j["name"] = o.name;
    j["pool"] = o.pool;
    j["instances"] = o.instances;
    j["submitted_s"] = Seconds(o.submitted);
    j["finished_s"] = o.finished ? Json(Seconds(*o.finished)) : Json(nullptr);
    std::vector<double> lat;
    for (absl::Duration d : o.latencies) lat.push_back(Seconds(d));
    all_latencies.insert(all_latencies.end(), lat.begin(), lat.end());
    j["latency_s"] = LatencyJson(std::move(lat));
    if (!o.refused.empty()) j["refused"] = o.refused;
    if (o.refused.empty()) {
      if (!o.finished) {
        makespan.reset();
      } else if (makespan) {
        makespan = std::max(*makespan, *o.finished);
      }
    }
    jobs.push_back(std::move(j));
  }

  Json& sum = report["summary"];
  sum["end_s"] = Seconds(r.end);
  sum["stalled"] = r.stalled;
  sum["makespan_s"] = makespan ? Json(Seconds(*makespan)) : Json(nullptr);
  sum["jobs"] = r.jobs.size();
  sum["jobs_finished"] = std::count_if(r.jobs.begin(), r.jobs.end(),
                                       [](const JobOutcome& o) { return o.finished.has_value(); });
  sum["jobs_refused"] = std::count_if(r.jobs.begin(), r.jobs.end(),
                                      [](const JobOutcome& o) { return !o.refused.empty(); });
  sum["cycles"] = r.cycles;
  sum["placements"] = r.placements;
  sum["preemptions"] = r.preemptions;
  sum["store_writes"] = r.store_writes;
  sum["latency_s"] = LatencyJson(std::move(all_latencies));
  Json util = Json::object();
  Json fair = Json::object();
  const double n = static_cast<double>(std::max<size_t>(1, r.intervals.size()));
  for (Dim d : dims) {
    util[std::string(DimName(d))] = Round(util_sum[static_cast<int>(d)] / n);
    Json f = Json::object();
    f["mean_pct"] =
        Round(dev_count == 0 ? 0.0 : dev_sum[static_cast<int>(d)] / static_cast<double>(dev_count));
    f["max_pct"] = Round(dev_max[static_cast<int>(d)]);
    fair[std::string(DimName(d))] = std::move(f);
  }
  Json dom = Json::object();
  dom["mean_pct"] = Round(dev_count == 0 ? 0.0 : dom_sum / static_cast<double>(dev_count));
  dom["max_pct"] = Round(dom_max);
  fair["dominant"] = std::move(dom);
  sum["utilisation"] = std::move(util);
  sum["fairness_deviation"] = std::move(fair);

  report["intervals"] = std::move(intervals);
  report["jobs"] = std::move(jobs);
  Json& timing = report["timing"];
  timing["wall_s"] = r.wall_seconds;
  timing["cpu_s"] = r.cpu_seconds;
  timing["speedup"] = r.wall_seconds > 0 ? Seconds(r.end) / r.wall_seconds : 0.0;
  timing["placements_per_wall_s"] =
      r.wall_seconds > 0 ? static_cast<double>(r.placements) / r.wall_seconds : 0.0;
  return report;
}

std::string SummaryText(const Json& report) {
  const Json& s = report["scenario"];
  const Json& sum = report["summary"];
  const Json& timing = report["timing"];
  std::string out;
  absl::StrAppendFormat(&out, "scenario %s: %d hosts, %d pools, %d jobs, seed %d, placement %s\n",
                        s["source"].get<std::string>(), s["hosts"].get<int64_t>(),
                        s["pools"].get<int64_t>(), s["jobs"].get<int64_t>(),
                        s["seed"].get<uint64_t>(), s["placement"].get<std::string>());
  double end = sum["end_s"].get<double>();
  absl::StrAppendFormat(&out, "simulated %s in %.3fs of wall time (%.0fx)%s\n",
                        FormatDurationShort(absl::Seconds(std::round(end))),
                        timing["wall_s"].get<double>(), timing["speedup"].get<double>(),
                        sum["stalled"].get<bool>() ? "; stopped: nothing could progress" : "");
  absl::StrAppendFormat(
      &out, "jobs: %d submitted, %d finished, %d refused; makespan %s\n",
      sum["jobs"].get<int64_t>(), sum["jobs_finished"].get<int64_t>(),
      sum["jobs_refused"].get<int64_t>(),
      sum["makespan_s"].is_null()
          ? std::string("- (not every job ended)")
          : FormatDurationShort(absl::Seconds(std::round(sum["makespan_s"].get<double>()))));
  const Json& lat = sum["latency_s"];
  absl::StrAppendFormat(&out,
                        "tasks: %d placements, %d preemptions; submit->running p50 %.1fs p90 %.1fs "
                        "p99 %.1fs max %.1fs\n",
                        sum["placements"].get<int64_t>(), sum["preemptions"].get<int64_t>(),
                        lat["p50"].get<double>(), lat["p90"].get<double>(),
                        lat["p99"].get<double>(), lat["max"].get<double>());
  std::string util, fair;
  for (const auto& [dim, v] : sum["utilisation"].items()) {
    absl::StrAppendFormat(&util, " %s %.1f%%", dim, 100 * v.get<double>());
  }
  for (const auto& [dim, v] : sum["fairness_deviation"].items()) {
    absl::StrAppendFormat(&fair, " %s %.2f%% (max %.2f%%)", dim, v["mean_pct"].get<double>(),
                          v["max_pct"].get<double>());
  }
  absl::StrAppend(&out, "utilisation (mean):", util, "\nfairness deviation (mean):", fair, "\n");

  // The pools at the end, one row per pool and dimension.
  if (report["intervals"].empty()) return out;
  const Json& last = report["intervals"].back();
  absl::StrAppendFormat(&out, "\npools at %s:\n%-20s %-7s %12s %12s %12s %12s %12s\n",
                        FormatDurationShort(absl::Seconds(std::round(last["t_s"].get<double>()))),
                        "POOL", "DIM", "RESERVATION", "LIMIT", "ENTITLEMENT", "ALLOCATION",
                        "DEMAND");
  auto cell = [](const Json& v) {
    if (v.is_null()) return std::string("unlimited");
    if (v.is_number_float()) return absl::StrFormat("%.6g", v.get<double>());
    return FormatBytes(v.get<int64_t>());
  };
  for (const auto& [path, dims] : last["pools"].items()) {
    for (const auto& [dim, v] : dims.items()) {
      absl::StrAppendFormat(&out, "%-20s %-7s %12s %12s %12s %12s %12s\n", path, dim,
                            cell(v["reservation"]), cell(v["limit"]), cell(v["entitlement"]),
                            cell(v["allocation"]), cell(v["demand"]));
    }
  }
  return out;
}

}  // namespace paceline::sim
