// `paceline info`: which master the CLI talks to, and its version, store, uptime and part among
// several masters. `paceline info --all` asks every configured master (--addr a,b,c) in turn,
// one row each; one that does not answer within 3 s is shown as unreachable, and the command
// fails only when none answers.

#include <grpcpp/grpcpp.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/client_config.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/cluster.grpc.pb.h"

namespace paceline::cli {
namespace {

// One master's answer to GetInfo, asked at `flags.addr`.
struct MasterInfo {
  std::string address;
  absl::StatusOr<v1::GetInfoResponse> info;
};

MasterInfo Ask(const ClientFlags& flags) {
  absl::StatusOr<Rpc> rpc = Rpc::Connect(flags);
  if (!rpc.ok()) return {flags.addr, rpc.status()};
  MasterInfo out{rpc->address(), absl::UnknownError("")};
  out.info = rpc->Call(CallKind::kRead, &v1::ClusterService::Stub::GetInfo, v1::GetInfoRequest());
  out.address = rpc->address();
  return out;
}

std::string Millis(int64_t ms) {
  return ms < 0 ? "-" : FormatDurationShort(absl::Milliseconds(ms));
}

nlohmann::json ToJson(const MasterInfo& m) {
  if (!m.info.ok()) {
    return {{"address", m.address}, {"error", std::string(m.info.status().message())}};
  }
  const v1::GetInfoResponse& r = *m.info;
  absl::Time started = absl::FromUnixMillis(r.started_at_unix_ms());
  return {{"address", m.address},
          {"version", r.version()},
          {"commit", r.commit()},
          {"cluster_id", r.cluster_id()},
          {"store", r.store()},
          {"started_at", absl::FormatTime(absl::RFC3339_sec, started, absl::UTCTimeZone())},
          {"role", r.role()},
          {"term", r.term()},
          {"leader", r.leader()},
          {"lease_age_ms", r.lease_age_ms()},
          {"replication_lag_ms", r.replication_lag_ms()}};
}

std::vector<std::string> Row(const MasterInfo& m) {
  if (!m.info.ok()) {
    return {m.address, "-",           "-", "-", "-",
            "-",       "unreachable", "-", "-", std::string(m.info.status().message())};
  }
  const v1::GetInfoResponse& r = *m.info;
  absl::Time started = absl::FromUnixMillis(r.started_at_unix_ms());
  std::string role = r.role();
  if (r.term() > 0) role = absl::StrCat(role, " (term ", r.term(), ")");
  return {m.address,
          r.version(),
          r.commit(),
          r.cluster_id(),
          r.store(),
          FormatDurationShort(absl::Trunc(absl::Now() - started, absl::Seconds(1))),
          role,
          r.leader().empty() ? "-" : r.leader(),
          Millis(r.replication_lag_ms()),
          ""};
}

}  // namespace

void RegisterInfoCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* info = app.add_subcommand("info", "show the master the CLI talks to");
  static bool all = false;
  info->add_flag("--all", all,
                 "ask every configured master (--addr a,b,c), one row each: role, term, leader "
                 "and a standby's replication lag");
  info->callback([&ctx] {
    std::vector<MasterInfo> masters;
    if (!all) {
      masters.push_back(Ask(ctx.client));
      if (!masters[0].info.ok()) return ctx.Fail(masters[0].info.status());
    } else {
      absl::StatusOr<ResolvedClient> resolved = ResolveClient(ctx.client);
      if (!resolved.ok()) return ctx.Fail(resolved.status());
      bool any = false;
      for (const std::string& addr : resolved->addrs) {
        ClientFlags one = ctx.client;
        one.addr = addr;
        one.timeout = "3s";
        masters.push_back(Ask(one));
        any = any || masters.back().info.ok();
      }
      if (!any) return ctx.Fail(masters[0].info.status());
    }
    nlohmann::json j = nlohmann::json::array();
    for (const MasterInfo& m : masters) j.push_back(ToJson(m));
    if (PrintStructured(ctx.client, all ? j : j[0])) return;
    std::vector<std::string> headers = {"address", "version", "commit", "cluster", "store",
                                        "uptime",  "role",    "leader", "lag",     "error"};
    if (!all) headers.resize(8);  // one master that answered: no lag or error to show
    Table t(headers);
    for (const MasterInfo& m : masters) {
      std::vector<std::string> row = Row(m);
      row.resize(headers.size());
      t.AddRow(row);
    }
    std::cout << t.Render();
  });
}

}  // namespace paceline::cli
