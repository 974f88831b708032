#pragma once
// Plots of simulation reports, drawn by gnuplot (Debian package gnuplot-nox, installed by
// scripts/install-deps.sh). Each function writes its data files (.dat, tab-separated, with a
// header comment), the gnuplot script (.gp) and the PNGs into `dir` (created if needed), and
// returns the PNG paths.
//
//   PlotScenarioReport   pool-<dim>.png: allocation (solid) and entitlement (dashed) of every
//                        leaf pool over time, one file per dimension the cluster has;
//                        utilisation.png: allocated / capacity per dimension over time.
//   PlotFillReport       fill-unallocated.png: unallocated GPU (% of capacity) against arrived
//                        GPU (% of capacity), one curve per placement profile;
//                        fill-fragmentation.png: the fragmentation measure likewise.
//
// FAILED_PRECONDITION with an install hint when gnuplot is not on the PATH; INTERNAL when it
// fails (its stderr in the message).
//
// Thread-safety: runs a child process; call from one thread.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/sim_report.h"

namespace paceline::sim {

absl::StatusOr<std::vector<std::string>> PlotScenarioReport(const Json& report,
                                                            const std::string& dir);
absl::StatusOr<std::vector<std::string>> PlotFillReport(const Json& report, const std::string& dir);

// Whether gnuplot is on the PATH.
bool GnuplotAvailable();

}  // namespace paceline::sim
