#pragma once
// The report of a simulation: JSON (docs/sim.md lists every field) and a readable summary.
//
// Units in the JSON: times in seconds (`*_s`), cpu in cores, memory and disk in bytes, gpu in
// devices; an unlimited limit is null. Only dimensions the cluster has (capacity > 0) appear.
// Everything except the `timing` object is a function of the scenario and its seed: two runs
// of one scenario produce the same JSON once `timing` is removed.
//
// Summary measures:
//   makespan_s            when the last job ended (null if some job had not ended);
//   latency_s             submit -> first RUNNING of each instance, percentiles (per job and
//                         over all tasks);
//   utilisation           allocated / capacity per dimension, mean over the intervals;
//   fairness_deviation    per leaf pool, dimension and interval |allocation - min(entitlement,
//                         demand)| / capacity: how far each pool is from what the resource
//                         manager's rules entitle it to use; mean and max, in % of capacity.
//
// Thread-safety: pure functions.

#include <string>

#include "nlohmann/json.hpp"
#include "sim/scenario.h"
#include "sim/sim_driver.h"

namespace paceline::sim {

using Json = nlohmann::ordered_json;

// `source` names the scenario (its file, or the trace) in the report.
Json BuildReport(const Scenario& scenario, const SimResult& result, const std::string& source);
// A few lines and a table per pool, for the terminal.
std::string SummaryText(const Json& report);

// Resource amounts in report units: cores, bytes, devices; null for kUnlimited.
Json DimValue(Dim d, int64_t value);
// Nearest-rank percentile (p in [0, 100]) of sorted values; 0 for an empty list.
double Percentile(const std::vector<double>& sorted, double p);

}  // namespace paceline::sim
