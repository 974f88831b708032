// Daemon and tool commands: master, agent, up, sim, bench.
//
// The daemons run in the foreground until SIGINT or SIGTERM, then stop cleanly (in-flight
// requests finish, the endpoints file is removed) and exit 0.

#include <pthread.h>
#include <signal.h>

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/context.h"
#include "common/net.h"
#include "common/version.h"
#include "master/master.h"

namespace paceline::cli {
namespace {

struct MasterFlags {
  std::string data_dir = "data";
  std::string listen = "127.0.0.1:5390";
  std::string http_listen = "127.0.0.1:5391";
};

void AddMasterFlags(CLI::App* cmd, MasterFlags& f) {
  cmd->add_option("--data-dir", f.data_dir, "directory of the embedded store")
      ->capture_default_str();
  cmd->add_option("--listen", f.listen, "gRPC API address (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--http-listen", f.http_listen, "HTTP address for /healthz, /metrics, web UI")
      ->capture_default_str();
}

// Blocks SIGINT/SIGTERM in this thread (and so in every thread started after it) and returns
// the set, so that the main thread can wait for them with sigwait.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

absl::Status RunMaster(const MasterFlags& f, absl::string_view role) {
  master::MasterConfig config;
  config.data_dir = f.data_dir;
  auto grpc_listen = ParseHostPort(f.listen);
  if (!grpc_listen.ok()) return WithFlag(grpc_listen.status(), "--listen");
  auto http_listen = ParseHostPort(f.http_listen);
  if (!http_listen.ok()) return WithFlag(http_listen.status(), "--http-listen");
  config.grpc_listen = *grpc_listen;
  config.http_listen = *http_listen;

  sigset_t stop_signals = BlockStopSignals();
  auto m = master::Master::Start(config);
  if (!m.ok()) return m.status();
  std::cout << "paceline " << role << " " << Version() << " (commit " << Commit() << ")\n"
            << "  store:  " << config.data_dir << "\n"
            << "  gRPC:   " << (*m)->endpoints().grpc << "\n"
            << "  HTTP:   http://" << (*m)->endpoints().http << "/healthz\n"
            << "Ctrl-C stops it." << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cout << "received " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
  (*m)->Shutdown();
  std::cout << "stopped" << std::endl;
  return absl::OkStatus();
}

}  // namespace

absl::Status WithFlag(const absl::Status& s, absl::string_view flag) {
  return absl::Status(s.code(), absl::StrCat(flag, ": ", s.message()));
}

void RegisterDaemonCommands(CLI::App& app, CommandContext& ctx) {
  static MasterFlags master_flags;
  CLI::App* master = app.add_subcommand("master", "run the master (store, API, scheduler)");
  AddMasterFlags(master, master_flags);
  master->callback([&ctx] {
    absl::Status s = RunMaster(master_flags, "master");
    if (!s.ok()) ctx.Fail(s);
  });

  static MasterFlags up_flags;
  CLI::App* up = app.add_subcommand("up", "run an all-in-one cluster: master + local agent");
  AddMasterFlags(up, up_flags);
  up->callback([&ctx] {
    absl::Status s = RunMaster(up_flags, "up");
    if (!s.ok()) ctx.Fail(s);
  });

  CLI::App* agent = app.add_subcommand("agent", "run a host agent (runs tasks on this host)");
  agent->allow_extras();
  agent->callback([&ctx] {
    ctx.Fail(absl::UnimplementedError("the host agent is not part of this version yet"));
  });
}

void RegisterToolCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* sim = app.add_subcommand("sim", "run the scheduler core against simulated hosts");
  sim->allow_extras();
  sim->callback([&ctx] {
    ctx.Fail(absl::UnimplementedError("the simulator is not part of this version yet"));
  });
  CLI::App* bench = app.add_subcommand("bench", "whole-system benchmarks with a JSON report");
  bench->allow_extras();
  bench->callback([&ctx] {
    ctx.Fail(absl::UnimplementedError("whole-system benchmarks are not part of this version yet"));
  });
}

}  // namespace paceline::cli
