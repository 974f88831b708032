// `paceline secret create|update|list|delete|rekey` (docs/security.md "Secrets"). A value is
// read from a file (or stdin: --from-file -), sent once over the master's TLS connection and
// never printed; `secret new-key`, which works on the master's key file, is in src/main.

#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "paceline/v1/secret.grpc.pb.h"

namespace paceline::cli {
namespace {

struct SecretFlags {
  std::string path, from_file, pool;
  bool recursive = false;
};

absl::StatusOr<std::string> ReadValue(const std::string& file) {
  std::stringstream value;
  if (file == "-") {
    value << std::cin.rdbuf();
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      return absl::InvalidArgumentError(absl::StrCat("--from-file: cannot read ", file));
    }
    value << in.rdbuf();
  }
  return value.str();
}

void Put(CommandContext& ctx, const SecretFlags& f, bool replace) {
  absl::StatusOr<std::string> value = ReadValue(f.from_file);
  if (!value.ok()) return ctx.Fail(value.status());
  v1::PutSecretRequest req;
  req.set_path(f.path);
  req.set_value(*std::move(value));
  req.set_replace(replace);
  std::optional<v1::PutSecretResponse> resp =
      Run(ctx, CallKind::kWrite, &v1::SecretService::Stub::PutSecret, req);
  if (!resp) return;
  if (PrintStructured(ctx.client, *resp)) return;
  std::cout << "secret " << resp->info().path() << (replace ? " updated" : " created")
            << " (sealed with key " << resp->info().key_id() << ")" << std::endl;
}

}  // namespace

void RegisterSecretCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* secret = AddGroup(app, "secret", kSecretGroupHelp);
  static SecretFlags f;
  CLI::App* create = secret->add_subcommand(
      "create", "store a secret of a pool, e.g. /ads/db-password (admin or pool-admin)");
  CLI::App* update = secret->add_subcommand("update", "replace a secret's value");
  for (CLI::App* c : {create, update}) {
    c->add_option("path", f.path, "<pool>/<name>, e.g. /ads/db-password")->required();
    c->add_option("--from-file", f.from_file, "the file holding the value (- for stdin)")
        ->required();
  }
  create->callback([&ctx] { Put(ctx, f, false); });
  update->callback([&ctx] { Put(ctx, f, true); });

  CLI::App* list = secret->add_subcommand("list", "secrets, without values");
  list->add_option("pool", f.pool, "only this pool's (default: every one you may read)");
  list->add_flag("-r,--recursive", f.recursive, "with the pools below it");
  list->callback([&ctx] {
    v1::ListSecretsRequest req;
    req.set_pool(f.pool);
    req.set_recursive(f.recursive);
    std::optional<v1::ListSecretsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::SecretService::Stub::ListSecrets, req);
    if (!resp || PrintStructured(ctx.client, *resp)) return;
    Table t({"path", "created by", "created", "updated", "key"});
    for (const v1::SecretInfo& s : resp->secrets()) {
      t.AddRow({s.path(), s.created_by(), FormatUnixMillis(s.created_at_unix_ms()),
                FormatUnixMillis(s.updated_at_unix_ms()), s.key_id()});
    }
    std::cout << t.Render();
  });

  CLI::App* del = secret->add_subcommand("delete", "delete a secret (admin or pool-admin)");
  del->add_option("path", f.path, "<pool>/<name>")->required();
  del->callback([&ctx] {
    v1::DeleteSecretRequest req;
    req.set_path(f.path);
    if (!Run(ctx, CallKind::kWrite, &v1::SecretService::Stub::DeleteSecret, req)) return;
    std::cout << "secret " << f.path << " deleted" << std::endl;
  });

  CLI::App* rekey = secret->add_subcommand(
      "rekey", "reseal every secret with the first key of the master's key file (admin only)");
  rekey->callback([&ctx] {
    std::optional<v1::RekeySecretsResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::SecretService::Stub::RekeySecrets, {});
    if (!resp || PrintStructured(ctx.client, *resp)) return;
    std::cout << resp->resealed() << " secrets resealed; every secret is sealed with key "
              << resp->key_id() << std::endl;
  });
}

}  // namespace paceline::cli
