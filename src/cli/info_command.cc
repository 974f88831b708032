// `paceline info`: which master the CLI talks to, and its version, store and uptime.

#include <grpcpp/grpcpp.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/grpc_status.h"
#include "cli/client_config.h"
#include "cli/context.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/cluster.grpc.pb.h"

namespace paceline::cli {

absl::Status ExplainRpcError(const absl::Status& s, const ResolvedClient& client) {
  if (s.code() == absl::StatusCode::kUnavailable) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the master at ", client.addr, " (from ", client.addr_source,
        "): ", s.message(), "; is it running? Start one with `make up` or `paceline up`"));
  }
  return s;
}

void RegisterInfoCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* info = app.add_subcommand("info", "show the master the CLI talks to");
  info->callback([&ctx] {
    absl::StatusOr<ResolvedClient> client = ResolveClient(ctx.client);
    if (!client.ok()) return ctx.Fail(client.status());
    auto channel = grpc::CreateChannel(client->addr, grpc::InsecureChannelCredentials());
    auto stub = v1::ClusterService::NewStub(channel);
    grpc::ClientContext rpc;
    rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetInfoResponse resp;
    absl::Status s = api::FromGrpcStatus(stub->GetInfo(&rpc, v1::GetInfoRequest(), &resp));
    if (!s.ok()) return ctx.Fail(ExplainRpcError(s, *client));
    absl::Time started = absl::FromUnixMillis(resp.started_at_unix_ms());
    if (ctx.client.format() == OutputFormat::kJson) {
      nlohmann::json j = {
          {"address", client->addr},
          {"version", resp.version()},
          {"commit", resp.commit()},
          {"cluster_id", resp.cluster_id()},
          {"store", resp.store()},
          {"started_at", absl::FormatTime(absl::RFC3339_sec, started, absl::UTCTimeZone())}};
      std::cout << j.dump(2) << std::endl;
      return;
    }
    Table t({"address", "version", "commit", "cluster", "store", "uptime"});
    t.AddRow({client->addr, resp.version(), resp.commit(), resp.cluster_id(), resp.store(),
              FormatDurationShort(absl::Trunc(absl::Now() - started, absl::Seconds(1)))});
    std::cout << t.Render();
  });
}

}  // namespace paceline::cli
