// `paceline info`: which master the CLI talks to, and its version, store, uptime and part among
// several masters. `paceline info --all` asks every configured master (--addr a,b,c) in turn,
// one row each; one that does not answer within 3 s is shown as unreachable, and the command
// fails only when none answers. `paceline version` prints the CLI's own version; `version --all`
// adds every configured master's (asked as `info --all` asks) and every host's agent's, as its
// agent said when it last registered: what an upgrade has reached (docs/operations.md).

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
#include "common/version.h"
#include "paceline/v1/cluster.grpc.pb.h"
#include "paceline/v1/host.grpc.pb.h"

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

// Asks every configured master (3 s each); fails when none answers.
absl::StatusOr<std::vector<MasterInfo>> AskAll(const ClientFlags& client) {
  absl::StatusOr<ResolvedClient> resolved = ResolveClient(client);
  if (!resolved.ok()) return resolved.status();
  std::vector<MasterInfo> masters;
  bool any = false;
  for (const std::string& addr : resolved->addrs) {
    ClientFlags one = client;
    one.addr = addr;
    one.timeout = "3s";
    masters.push_back(Ask(one));
    any = any || masters.back().info.ok();
  }
  if (!any) return masters[0].info.status();
  return masters;
}

// `version --all`: the CLI, each master, each host's agent.
void PrintVersions(CommandContext& ctx) {
  absl::StatusOr<std::vector<MasterInfo>> masters = AskAll(ctx.client);
  if (!masters.ok()) return ctx.Fail(masters.status());
  std::vector<v1::HostInfo> hosts;
  v1::ListHostsRequest req;
  do {
    absl::StatusOr<v1::ListHostsResponse> resp =
        Call(ctx.client, CallKind::kRead, &v1::HostService::Stub::ListHosts, req);
    if (!resp.ok()) return ctx.Fail(resp.status());
    hosts.insert(hosts.end(), resp->hosts().begin(), resp->hosts().end());
    req.set_page_token(resp->next_page_token());
  } while (!req.page_token().empty());

  nlohmann::json j = {{"cli", {{"version", Version()}, {"commit", Commit()}}},
                      {"masters", nlohmann::json::array()},
                      {"agents", nlohmann::json::array()}};
  Table t({"component", "name", "version", "commit", "state"});
  t.AddRow({"cli", "-", std::string(Version()), std::string(Commit()), "-"});
  for (const MasterInfo& m : *masters) {
    j["masters"].push_back(ToJson(m));
    if (!m.info.ok()) {
      t.AddRow({"master", m.address, "-", "-", "unreachable"});
    } else {
      t.AddRow({"master", m.address, m.info->version(), m.info->commit(), m.info->role()});
    }
  }
  for (const v1::HostInfo& h : hosts) {
    j["agents"].push_back({{"host", h.name()},
                           {"version", h.agent_version()},
                           {"commit", h.agent_commit()},
                           {"state", h.state()},
                           {"connected", h.connected()}});
    t.AddRow({"agent", h.name(), h.agent_version().empty() ? "-" : h.agent_version(),
              h.agent_commit().empty() ? "-" : h.agent_commit(), h.state()});
  }
  if (PrintStructured(ctx.client, j)) return;
  std::cout << t.Render();
}

}  // namespace

void RegisterVersionCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* version =
      app.add_subcommand("version", "show the versions of the CLI, masters, agents");
  static bool all = false;
  version->add_flag("--all", all,
                    "also every configured master's (--addr a,b,c) and every host's agent's, as "
                    "it said when it last registered");
  version->callback([&ctx] {
    if (all) return PrintVersions(ctx);
    if (PrintStructured(ctx.client, {{"version", Version()}, {"commit", Commit()}})) return;
    std::cout << "paceline " << Version() << " (commit " << Commit() << ")\n";
  });
}

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
      absl::StatusOr<std::vector<MasterInfo>> asked = AskAll(ctx.client);
      if (!asked.ok()) return ctx.Fail(asked.status());
      masters = *std::move(asked);
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
