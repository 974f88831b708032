// gnuplot plots of simulation reports (see sim_plot.h).

#include "sim/sim_plot.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paceline::sim {
namespace {

constexpr absl::string_view kTerminal =
    "set terminal pngcairo size 1000,560 noenhanced font 'sans,10'\n"
    "set grid\nset key outside right top\n";

std::optional<std::string> FindGnuplot() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/gnuplot");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status MissingGnuplot() {
  return absl::FailedPreconditionError(
      "--plot needs gnuplot, which is not on the PATH; install it with "
      "`apt-get install gnuplot-nox` (or run scripts/install-deps.sh)");
}

// Runs `gnuplot script` in `dir`; its output goes to DIR/gnuplot.log.
absl::Status RunGnuplot(const std::string& dir, const std::string& script) {
  std::optional<std::string> gnuplot = FindGnuplot();
  if (!gnuplot) return MissingGnuplot();
  std::string log = dir + "/gnuplot.log";
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("cannot start gnuplot: fork failed");
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execl(gnuplot->c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return absl::InternalError(absl::StrCat("gnuplot failed on ", dir, "/", script, ": ", text));
  }
  return absl::OkStatus();
}

absl::Status PrepareDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("--plot: ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

std::string Unit(const std::string& dim) {
  if (dim == "cpu") return "cores";
  if (dim == "gpu") return "GPUs";
  return "GiB";
}

double InUnit(const std::string& dim, const Json& v) {
  if (v.is_null()) return 0;
  double x = v.get<double>();
  return dim == "memory" || dim == "disk" ? x / (1024.0 * 1024 * 1024) : x;
}

}  // namespace

bool GnuplotAvailable() { return FindGnuplot().has_value(); }

absl::StatusOr<std::vector<std::string>> PlotScenarioReport(const Json& report,
                                                            const std::string& dir) {
  if (!GnuplotAvailable()) return MissingGnuplot();
  if (absl::Status s = PrepareDir(dir); !s.ok()) return s;
  const Json& intervals = report["intervals"];
  std::vector<std::string> dims;
  for (const auto& [dim, v] : report["scenario"]["capacity"].items()) dims.push_back(dim);
  std::vector<std::string> leaves;
  if (!intervals.empty()) {
    std::vector<std::string> paths;
    for (const auto& [path, v] : intervals[0]["pools"].items()) paths.push_back(path);
    for (size_t i = 0; i < paths.size(); ++i) {
      bool leaf = paths[i] != "/";
      for (const std::string& other : paths) {
        if (other.size() > paths[i].size() &&
            other.compare(0, paths[i].size() + 1, paths[i] + "/") == 0) {
          leaf = false;
        }
      }
      if (leaf) leaves.push_back(paths[i]);
    }
  }

  // pools.dat: t_s, then per dimension and leaf pool: allocation, entitlement, demand.
  std::string dat = "# t_s";
  for (const std::string& d : dims) {
    for (const std::string& p : leaves) absl::StrAppend(&dat, "\t", p, ":", d, ":alloc/ent/demand");
  }
  absl::StrAppend(&dat, "\n");
  for (const Json& iv : intervals) {
    absl::StrAppendFormat(&dat, "%g", iv["t_s"].get<double>());
    for (const std::string& d : dims) {
      for (const std::string& p : leaves) {
        const Json& v = iv["pools"][p][d];
        absl::StrAppendFormat(&dat, "\t%g\t%g\t%g", InUnit(d, v["allocation"]),
                              InUnit(d, v["entitlement"]), InUnit(d, v["demand"]));
      }
    }
    absl::StrAppend(&dat, "\n");
  }
  std::string util = "# t_s";
  for (const std::string& d : dims) absl::StrAppend(&util, "\t", d, "_pct");
  absl::StrAppend(&util, "\n");
  for (const Json& iv : intervals) {
    absl::StrAppendFormat(&util, "%g", iv["t_s"].get<double>());
    for (const std::string& d : dims) {
      absl::StrAppendFormat(&util, "\t%g", 100 * iv["utilisation"][d].get<double>());
    }
    absl::StrAppend(&util, "\n");
  }
  if (absl::Status s = WriteFile(dir + "/pools.dat", dat); !s.ok()) return s;
  if (absl::Status s = WriteFile(dir + "/utilisation.dat", util); !s.ok()) return s;

  std::string gp(kTerminal);
  absl::StrAppend(&gp, "set xlabel 'simulated time (s)'\n");
  std::vector<std::string> pngs;
  for (size_t di = 0; di < dims.size(); ++di) {
    const std::string& d = dims[di];
    std::string png = absl::StrCat("pool-", d, ".png");
    absl::StrAppend(&gp, "set output '", png, "'\nset title 'allocation (solid) vs entitlement ",
                    "(dashed) per pool: ", d, "'\nset ylabel '", Unit(d), "'\nplot ");
    std::vector<std::string> series;
    for (size_t pi = 0; pi < leaves.size(); ++pi) {
      size_t col = 2 + 3 * (di * leaves.size() + pi);
      int color = static_cast<int>(pi) + 1;
      series.push_back(absl::StrFormat(
          "'pools.dat' using 1:%d with steps lw 2 lc %d title '%s allocation', "
          "'pools.dat' using 1:%d with steps dt 2 lw 2 lc %d title '%s entitlement'",
          col, color, leaves[pi], col + 1, color, leaves[pi]));
    }
    absl::StrAppend(&gp, absl::StrJoin(series, ", "), "\n");
    pngs.push_back(dir + "/" + png);
  }
  absl::StrAppend(&gp, "set output 'utilisation.png'\nset title 'cluster utilisation'\n",
                  "set ylabel '% of capacity allocated'\nset yrange [0:105]\nplot ");
  std::vector<std::string> series;
  for (size_t di = 0; di < dims.size(); ++di) {
    series.push_back(absl::StrFormat("'utilisation.dat' using 1:%d with steps lw 2 title '%s'",
                                     di + 2, dims[di]));
  }
  absl::StrAppend(&gp, absl::StrJoin(series, ", "), "\n");
  pngs.push_back(dir + "/utilisation.png");
  if (absl::Status s = WriteFile(dir + "/plot.gp", gp); !s.ok()) return s;
  if (absl::Status s = RunGnuplot(dir, "plot.gp"); !s.ok()) return s;
  return pngs;
}

absl::StatusOr<std::vector<std::string>> PlotFillReport(const Json& report,
                                                        const std::string& dir) {
  if (!GnuplotAvailable()) return MissingGnuplot();
  if (absl::Status s = PrepareDir(dir); !s.ok()) return s;
  std::vector<std::string> profiles;
  for (const auto& [name, v] : report["profiles"].items()) profiles.push_back(name);
  std::string dat = "# arrived_pct";
  for (const std::string& p : profiles) {
    absl::StrAppend(&dat, "\t", p, ":unalloc_mean\tunalloc_std\tfrag_mean\tfrag_std");
  }
  absl::StrAppend(&dat, "\n");
  size_t n = profiles.empty() ? 0 : report["profiles"][profiles[0]]["buckets"].size();
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppendFormat(
        &dat, "%g", report["profiles"][profiles[0]]["buckets"][i]["arrived_pct"].get<double>());
    for (const std::string& p : profiles) {
      const Json& b = report["profiles"][p]["buckets"][i];
      absl::StrAppendFormat(&dat, "\t%g\t%g\t%g\t%g", b["unallocated_pct"]["mean"].get<double>(),
                            b["unallocated_pct"]["std"].get<double>(),
                            b["fragmentation_pct"]["mean"].get<double>(),
                            b["fragmentation_pct"]["std"].get<double>());
    }
    absl::StrAppend(&dat, "\n");
  }
  if (absl::Status s = WriteFile(dir + "/fill.dat", dat); !s.ok()) return s;
  std::string gp(kTerminal);
  absl::StrAppend(&gp, "set xlabel 'arrived GPU (% of capacity)'\n");
  std::vector<std::string> pngs;
  for (int which = 0; which < 2; ++which) {
    std::string png = which == 0 ? "fill-unallocated.png" : "fill-fragmentation.png";
    absl::StrAppend(&gp, "set output '", png, "'\nset title '",
                    which == 0 ? "unallocated GPU" : "GPU fragmentation",
                    " (mean over repetitions)'\nset ylabel '% of GPU capacity'\nplot ");
    std::vector<std::string> series;
    for (size_t pi = 0; pi < profiles.size(); ++pi) {
      series.push_back(absl::StrFormat("'fill.dat' using 1:%d with lines lw 2 title '%s'",
                                       2 + 4 * pi + 2 * which, profiles[pi]));
    }
    absl::StrAppend(&gp, absl::StrJoin(series, ", "), "\n");
    pngs.push_back(dir + "/" + png);
  }
  if (absl::Status s = WriteFile(dir + "/plot.gp", gp); !s.ok()) return s;
  if (absl::Status s = RunGnuplot(dir, "plot.gp"); !s.ok()) return s;
  return pngs;
}

}  // namespace paceline::sim
