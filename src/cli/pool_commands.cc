// `paceline pool create|get|list|update|delete|validate`.

#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/peloton_commands.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/pool.grpc.pb.h"
#include "spec/yaml_spec.h"

namespace paceline::cli {
namespace {

struct PoolFlags {
  std::string path;
  std::string file;
  std::string format = "paceline";
  bool force = false;
};

// A create or update request with the pool's path and its spec file, checked locally first; a
// bad file fails the command.
template <typename Req>
std::optional<Req> SpecRequest(CommandContext& ctx, const PoolFlags& f) {
  absl::StatusOr<std::string> yaml = PoolSpecYaml(f.file, f.format);
  if (!yaml.ok()) {
    ctx.Fail(yaml.status());
    return std::nullopt;
  }
  Req req;
  req.set_path(f.path);
  req.set_spec_yaml(*yaml);
  req.set_spec_name(SpecName(f.file, f.format));
  return req;
}

std::string Quantity(Dim d, int64_t v) {
  return d == Dim::kMemory || d == Dim::kDisk ? FormatBytesApprox(v) : FormatQuantity(d, v);
}

void AddPoolRows(const v1::PoolInfo& p, Table& t) {
  bool first = true;
  for (const v1::PoolDimension& d : p.dimensions()) {
    Dim dim = *DimFromName(d.name());
    bool zero = d.reservation() == 0 && d.limit() == kUnlimited && d.entitlement() == 0 &&
                d.allocation() == 0 && d.demand() == 0;
    if (zero && dim != Dim::kCpu) continue;  // keep tables short: cpu always, others if set
    t.AddRow({first ? p.path() : "", d.name(), Quantity(dim, d.reservation()),
              Quantity(dim, d.limit()), absl::StrCat(d.share()), Quantity(dim, d.entitlement()),
              Quantity(dim, d.allocation()), Quantity(dim, d.demand()),
              first ? absl::StrCat(p.queued_gangs()) : ""});
    first = false;
  }
}

// "fair share: factor 0.25, decayed usage 4.50 cluster-hours (100% of its siblings'), half-life
// 24h" when the pool's parent has a fair_share policy; a factor per dimension when they differ.
std::string FairShareLine(const v1::PoolInfo& p) {
  if (!p.has_fair_share()) return "";
  const v1::PoolFairShare& f = p.fair_share();
  std::string factor;
  bool same = true;
  for (const v1::PoolDimension& d : p.dimensions()) {
    same &= d.fair_share_factor() == p.dimensions(0).fair_share_factor();
  }
  for (const v1::PoolDimension& d : p.dimensions()) {
    if (same) {
      factor = absl::StrFormat("%.3g", d.fair_share_factor());
      break;
    }
    absl::StrAppend(&factor, factor.empty() ? "" : ", ", d.name(), " ",
                    absl::StrFormat("%.3g", d.fair_share_factor()));
  }
  return absl::StrFormat(
      "fair share: factor %s, decayed usage %.2f cluster-hours (%.0f%% of its siblings'), "
      "half-life %s\n",
      factor, f.decayed_usage() / 3600, 100 * f.usage_fraction(),
      FormatDurationShort(absl::Milliseconds(f.half_life_ms())));
}

Table PoolTable() {
  return Table({"pool", "resource", "reservation", "limit", "share", "entitlement", "allocation",
                "demand", "queued"});
}

}  // namespace

void RegisterPoolCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* pool = AddGroup(app, "pool", "manage resource pools");
  static PoolFlags f;

  CLI::App* create = pool->add_subcommand("create", "create a pool from a spec file");
  create->add_option("path", f.path, "pool path, e.g. /ads/training")->required();
  create->add_option("-f,--file", f.file, "pool spec (YAML)")->required();
  AddFormatOption(*create, f.format);
  create->callback([&ctx] {
    std::optional<v1::CreatePoolRequest> req = SpecRequest<v1::CreatePoolRequest>(ctx, f);
    if (!req || !Run(ctx, CallKind::kWrite, &v1::PoolService::Stub::CreatePool, *req)) return;
    std::cout << "pool " << f.path << " created" << std::endl;
  });

  CLI::App* update = pool->add_subcommand("update", "replace a pool's spec");
  update->add_option("path", f.path, "pool path")->required();
  update->add_option("-f,--file", f.file, "pool spec (YAML)")->required();
  AddFormatOption(*update, f.format);
  update->add_flag("--force", f.force, "apply even if it invalidates the tree (says what broke)");
  update->callback([&ctx] {
    std::optional<v1::UpdatePoolRequest> req = SpecRequest<v1::UpdatePoolRequest>(ctx, f);
    if (!req) return;
    req->set_force(f.force);
    std::optional<v1::UpdatePoolResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::PoolService::Stub::UpdatePool, *req);
    if (!resp) return;
    std::cout << "pool " << f.path << " updated" << std::endl;
    for (const std::string& b : resp->broke()) std::cout << "  forced past: " << b << std::endl;
  });

  CLI::App* del = pool->add_subcommand("delete", "delete an empty leaf pool");
  del->add_option("path", f.path, "pool path")->required();
  del->callback([&ctx] {
    v1::DeletePoolRequest req;
    req.set_path(f.path);
    std::optional<v1::DeletePoolResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::PoolService::Stub::DeletePool, req);
    if (!resp) return;
    std::cout << "pool " << f.path << " deleted" << std::endl;
  });

  CLI::App* list = pool->add_subcommand("list", "the pool tree with entitlement and allocation");
  list->callback([&ctx] {
    std::optional<v1::ListPoolsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::PoolService::Stub::ListPools, v1::ListPoolsRequest());
    if (!resp) return;
    Table t = PoolTable();
    for (const v1::PoolInfo& p : resp->pools()) AddPoolRows(p, t);
    std::cout << t.Render();
  });

  CLI::App* get = pool->add_subcommand("get", "one pool, with its queue and why each gang waits");
  get->add_option("path", f.path, "pool path")->required();
  get->callback([&ctx] {
    v1::GetPoolRequest req;
    req.set_path(f.path);
    std::optional<v1::GetPoolResponse> resp =
        Run(ctx, CallKind::kRead, &v1::PoolService::Stub::GetPool, req);
    if (!resp) return;
    Table t = PoolTable();
    AddPoolRows(resp->pool(), t);
    std::cout << t.Render() << FairShareLine(resp->pool());
    if (resp->queue_size() == 0) {
      std::cout << "\nqueue: empty" << std::endl;
      return;
    }
    std::cout << "\nqueue:\n";
    Table q({"pos", "job", "priority", "sla", "tasks", "resources", "why waiting"});
    constexpr int kShown = 20;
    for (const v1::QueuedGang& g : resp->queue()) {
      if (q.size() == kShown) break;
      q.AddRow({absl::StrCat(g.position()), absl::StrCat(g.job_id()), absl::StrCat(g.priority()),
                g.sla(), absl::StrCat(g.tasks()), FormatResources(g.resources()), g.reason()});
    }
    std::cout << q.Render();
    if (resp->queue_size() > kShown) {
      std::cout << "... and " << resp->queue_size() - kShown << " more (-o json lists all)\n";
    }
  });

  AddPoolValidateCommand(*pool, ctx);
}

}  // namespace paceline::cli
