// `paceline bench fleet --hosts N [--cpu C] [--memory M] [--gpus G [--gpu-model M]
//  [--unhealthy-gpu I]...] [--task-duration D] [--prefix P]`:
// N emulated hosts (bench/grpc_agent_fleet.h), each on its own agent stream to the master of
// --addr/--token, until Ctrl-C. Their tasks run nothing: a launched task reports RUNNING, then
// SUCCEEDED after --task-duration (default: runs until killed). For trying the UI or the API
// on a large cluster, and for the web UI's load test.

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "bench/grpc_agent_fleet.h"
#include "bench/local_master.h"
#include "cli/client_config.h"
#include "common/units.h"
#include "main/commands.h"
#include "main/stop_signals.h"

namespace paceline::cli {

void RegisterFleetBench(CLI::App* bench, CommandContext& ctx) {
  static int hosts = 100;
  static std::string cpu = "32";
  static std::string memory = "128Gi";
  static std::string task_duration;
  static std::string prefix = "emulated";
  static int gpus = 0;
  static std::string gpu_model = "emulated";
  static std::vector<uint32_t> unhealthy;
  CLI::App* fleet = bench->add_subcommand(
      "fleet", "emulated hosts on real agent streams to a running master, until Ctrl-C");
  fleet->add_option("--hosts", hosts, "how many hosts")->capture_default_str();
  fleet->add_option("--cpu", cpu, "cores per host")->capture_default_str();
  fleet->add_option("--memory", memory, "memory per host")->capture_default_str();
  fleet->add_option("--task-duration", task_duration,
                    "a task succeeds this long after it runs (default: runs until killed)");
  fleet->add_option("--prefix", prefix, "host names: PREFIX-00000, ...")->capture_default_str();
  fleet->add_option("--gpus", gpus, "GPU devices per host")->capture_default_str();
  fleet->add_option("--gpu-model", gpu_model, "the devices' model")->capture_default_str();
  fleet->add_option("--unhealthy-gpu", unhealthy,
                    "a device every host reports unhealthy (an emulated XID; repeatable)");
  fleet->callback([&ctx] {
    if (hosts < 1) return ctx.Fail(absl::InvalidArgumentError("--hosts: at least 1"));
    if (gpus < 0 || gpus > 64) {
      return ctx.Fail(absl::InvalidArgumentError("--gpus: expected 0 to 64 devices per host"));
    }
    for (uint32_t d : unhealthy) {
      if (d >= static_cast<uint32_t>(gpus)) {
        return ctx.Fail(absl::InvalidArgumentError(
            absl::StrCat("--unhealthy-gpu: ", d, ": expected a device below --gpus ", gpus)));
      }
    }
    absl::StatusOr<int64_t> cpu_milli = ParseCpu(cpu);
    if (!cpu_milli.ok()) return ctx.Fail(WithFlag(cpu_milli.status(), "--cpu"));
    absl::StatusOr<int64_t> bytes = ParseBytes(memory);
    if (!bytes.ok()) return ctx.Fail(WithFlag(bytes.status(), "--memory"));
    absl::StatusOr<ResolvedClient> client = ResolveClient(ctx.client);
    if (!client.ok()) return ctx.Fail(client.status());
    bench::GrpcFleetConfig config;
    config.master_addr = client->addr;
    absl::StatusOr<std::string> agent_token = bench::CreateAgentToken(client->addr, client->token);
    if (!agent_token.ok()) return ctx.Fail(agent_token.status());
    config.token = *agent_token;
    v1::Resources capacity = bench::Capacity(*cpu_milli, *bytes);
    capacity.set_gpu_milli(int64_t{gpus} * 1000);  // milli-GPUs
    config.hosts = bench::UniformHosts(hosts, prefix, capacity, {{"kind", "emulated"}});
    for (bench::FakeHostSpec& h : config.hosts) {
      h.gpu_model = gpu_model;
      h.unhealthy_gpus = unhealthy;
    }
    if (!task_duration.empty()) {
      absl::StatusOr<absl::Duration> d = ParseDurationStrict(task_duration);
      if (!d.ok()) return ctx.Fail(WithFlag(d.status(), "--task-duration"));
      config.agent.task_duration = *d;
    }
    sigset_t stop = BlockStopSignals();
    absl::StatusOr<std::unique_ptr<bench::GrpcAgentFleet>> started =
        bench::GrpcAgentFleet::Start(std::move(config));
    if (!started.ok()) return ctx.Fail(started.status());
    absl::Status registered = (*started)->WaitRegistered(absl::Seconds(60));
    if (!registered.ok()) return ctx.Fail(registered);
    std::cout << hosts << " emulated hosts registered with " << client->addr << "; Ctrl-C stops"
              << std::endl;
    WaitForStopSignal(stop);
    (*started)->Stop();
  });
}

}  // namespace paceline::cli
