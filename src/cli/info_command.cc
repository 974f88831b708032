// `paceline info`: which master the CLI talks to, and its version, store and uptime.

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

void RegisterInfoCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* info = app.add_subcommand("info", "show the master the CLI talks to");
  info->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    absl::StatusOr<v1::GetInfoResponse> resp =
        rpc->Call(CallKind::kRead, &v1::ClusterService::Stub::GetInfo, v1::GetInfoRequest());
    if (!resp.ok()) return ctx.Fail(resp.status());
    absl::Time started = absl::FromUnixMillis(resp->started_at_unix_ms());
    nlohmann::json j = {
        {"address", rpc->address()},
        {"version", resp->version()},
        {"commit", resp->commit()},
        {"cluster_id", resp->cluster_id()},
        {"store", resp->store()},
        {"started_at", absl::FormatTime(absl::RFC3339_sec, started, absl::UTCTimeZone())},
        {"role", resp->role()},
        {"term", resp->term()},
        {"leader", resp->leader()},
        {"lease_age_ms", resp->lease_age_ms()}};
    if (PrintStructured(ctx.client, j)) return;
    Table t({"address", "version", "commit", "cluster", "store", "uptime", "role", "leader"});
    std::string role = resp->role();
    if (resp->term() > 0) role = absl::StrCat(role, " (term ", resp->term(), ")");
    t.AddRow({rpc->address(), resp->version(), resp->commit(), resp->cluster_id(), resp->store(),
              FormatDurationShort(absl::Trunc(absl::Now() - started, absl::Seconds(1))), role,
              resp->leader().empty() ? "-" : resp->leader()});
    std::cout << t.Render();
  });
}

}  // namespace paceline::cli
