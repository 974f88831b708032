// `paceline store migrate --from STORE --to STORE`: moves a cluster's state between backends
// (store/copy_store.h), then reads both back and compares them. Run it with the masters
// stopped: the source must not change while it is copied.
//
//   paceline store migrate --from sqlite:data --to postgres://paceline@db:5432/paceline
//
// Prints what was copied; exit 0 when the copy is verified equal, 1 on any error (the target
// is then as empty as before: the copy is one transaction).

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "main/commands.h"
#include "store/copy_store.h"
#include "store/open_store.h"

namespace paceline::cli {
namespace {

struct MigrateFlags {
  std::string from;
  std::string to;
};

absl::Status Migrate(const MigrateFlags& f) {
  if (f.from == f.to) return absl::InvalidArgumentError("--from and --to name the same store");
  absl::StatusOr<std::unique_ptr<store::Store>> from = store::OpenStore(f.from, "");
  if (!from.ok()) return WithFlag(from.status(), "--from");
  absl::StatusOr<std::unique_ptr<store::Store>> to = store::OpenStore(f.to, "");
  if (!to.ok()) return WithFlag(to.status(), "--to");
  std::cout << "copying " << (*from)->Describe() << " to " << (*to)->Describe() << std::endl;
  ASSIGN_OR_RETURN(store::CopyReport r, store::CopyStore(**from, **to));
  std::cout << "copied " << r.pools << " pools, " << r.jobs << " jobs, " << r.tasks << " tasks, "
            << r.hosts << " hosts, " << r.events << " events, " << r.tokens << " tokens, "
            << r.secrets << " secrets, " << r.audit << " audit records" << std::endl;
  RETURN_IF_ERROR(WithContext(store::CompareStores(**from, **to), "verifying the copy"));
  std::cout << "verified: both stores hold the same state" << std::endl;
  return absl::OkStatus();
}

}  // namespace

void RegisterStoreCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = AddGroup(app, "store", "manage the cluster's store");
  static MigrateFlags f;
  CLI::App* migrate = group->add_subcommand(
      "migrate", "copy a cluster's state into an empty store of another backend, then verify");
  migrate->add_option("--from", f.from, "source: sqlite:DIR or postgres://…")->required();
  migrate->add_option("--to", f.to, "target (must be empty): sqlite:DIR or postgres://…")
      ->required();
  migrate->footer(
      "\nStop the masters first. Example:\n"
      "  paceline store migrate --from sqlite:data --to postgres://paceline@db:5432/paceline");
  migrate->callback([&ctx] {
    absl::Status s = Migrate(f);
    if (!s.ok()) ctx.Fail(s);
  });
}

}  // namespace paceline::cli
