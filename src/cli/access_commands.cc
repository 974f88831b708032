// `paceline whoami`, `paceline token create|list|revoke` and `paceline audit list|export`
// (docs/security.md).

#include <iostream>

#include <google/protobuf/util/json_util.h>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/access.grpc.pb.h"

namespace paceline::cli {
namespace {

struct TokenFlags {
  std::string user, group, role, pool, name, expires, ttl;
  std::string id;
  bool join = false;
};

struct AuditFlags {
  std::string user, pool, since;
  uint32_t limit = 100;
};

std::string Scope(const v1::TokenInfo& t) {
  return t.role() == "agent" ? "host " + t.scope() : t.scope();
}

v1::ListAuditRequest AuditRequest(const AuditFlags& f, int64_t since) {
  v1::ListAuditRequest req;
  req.set_user(f.user);
  req.set_pool(f.pool);
  req.set_since_unix_ms(since);
  return req;
}

void RegisterTokenCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* token = AddGroup(app, "token", "API tokens of users, service accounts and agents");
  static TokenFlags f;

  CLI::App* create = token->add_subcommand(
      "create", "make a token; its secret is printed once and kept nowhere (admin only)");
  create->add_option("--user", f.user,
                     "who it acts as (an agent's: its host, or * for any); required, but with "
                     "--join (default *)");
  create->add_option("--role", f.role, "admin, pool-admin, submitter, viewer or agent")->required();
  create->add_option("--pool", f.pool, "the pool subtree the role applies to (default /)");
  create->add_option("--group", f.group, "the user's group: a submitter acts on its group's jobs");
  create->add_option("--name", f.name, "a label, e.g. ci-deploy");
  create->add_option("--expires", f.expires, "valid this long, e.g. 30d, 12h (default: never)");
  create->add_flag("--join", f.join,
                   "with --role agent: a join token for `paceline agent join`, used once; "
                   "prints the CA hash to pin");
  create->add_option("--ttl", f.ttl, "with --join: valid this long (default 1h)");
  create->callback([&ctx] {
    if (f.join && f.user.empty()) f.user = "*";
    if (f.user.empty()) {
      return ctx.Fail(absl::InvalidArgumentError("--user: required (who the token acts as)"));
    }
    if (!f.ttl.empty() && !f.join) {
      return ctx.Fail(absl::InvalidArgumentError(
          "--ttl: the lifetime of a join token, given with --join (other tokens: --expires)"));
    }
    if (!f.ttl.empty() && !f.expires.empty()) {
      return ctx.Fail(absl::InvalidArgumentError("--ttl and --expires: give one of them"));
    }
    if (!f.ttl.empty()) f.expires = f.ttl;
    v1::CreateTokenRequest req;
    req.set_join(f.join);
    req.set_user(f.user);
    req.set_group(f.group);
    req.set_role(f.role);
    req.set_scope(f.pool);
    req.set_name(f.name);
    if (!f.expires.empty()) {
      absl::StatusOr<absl::Duration> d = ParseDurationStrict(f.expires);
      if (!d.ok()) return ctx.Fail(WithFlag(d.status(), "--expires"));
      req.set_expires_in_seconds(absl::ToInt64Seconds(*d));
    }
    std::optional<v1::CreateTokenResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::AccessService::Stub::CreateToken, req);
    if (!resp) return;
    const v1::TokenInfo& i = resp->info();
    if (f.join) {
      std::cout << resp->token() << "\n"
                << "join token " << i.id() << " for host " << i.user() << ", used once, expires "
                << FormatUnixMillis(i.expires_at_unix_ms()) << "\n"
                << "CA hash: " << resp->ca_hash() << "\n"
                << "On the new host:\n  paceline agent join MASTER:PORT --token " << resp->token()
                << " --ca-hash " << resp->ca_hash()
                << (i.user() == "*" ? " --name HOST" : " --name " + i.user()) << "\n"
                << "The secret above is shown this once; the master keeps only a hash of it."
                << std::endl;
      return;
    }
    std::cout << resp->token() << "\n"
              << "token " << i.id() << ": " << i.user() << " (" << i.role() << " on " << Scope(i)
              << "), expires " << FormatUnixMillis(i.expires_at_unix_ms()) << "\n"
              << "The secret above is shown this once; the master keeps only a hash of it."
              << std::endl;
  });

  CLI::App* list = token->add_subcommand("list", "every token, without secrets (admin only)");
  list->add_option("--user", f.user, "only this user's");
  list->callback([&ctx] {
    v1::ListTokensRequest req;
    req.set_user(f.user);
    std::optional<v1::ListTokensResponse> resp =
        Run(ctx, CallKind::kRead, &v1::AccessService::Stub::ListTokens, req);
    if (!resp) return;
    Table t({"id", "name", "user", "group", "role", "scope", "state", "expires", "created by",
             "created"});
    for (const v1::TokenInfo& i : resp->tokens()) {
      t.AddRow({i.id(), i.name(), i.user(), i.group(), i.role(), Scope(i), i.state(),
                i.expires_at_unix_ms() == 0 ? "never" : FormatUnixMillis(i.expires_at_unix_ms()),
                i.created_by(), FormatUnixMillis(i.created_at_unix_ms())});
    }
    std::cout << t.Render();
  });

  CLI::App* revoke = token->add_subcommand("revoke", "refuse a token from now on (admin only)");
  revoke->add_option("id", f.id, "the token's id (token list)")->required();
  revoke->callback([&ctx] {
    v1::RevokeTokenRequest req;
    req.set_id(f.id);
    std::optional<v1::RevokeTokenResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::AccessService::Stub::RevokeToken, req);
    if (!resp) return;
    std::cout << "token " << f.id << " (" << resp->info().user() << ") revoked at "
              << FormatUnixMillis(resp->info().revoked_at_unix_ms()) << std::endl;
  });
}

void RegisterAuditCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* audit = AddGroup(app, "audit", "the audit log: every change and every refusal");
  static AuditFlags f;
  for (CLI::App* c : {audit->add_subcommand("list", "the newest audit records (admin only)"),
                      audit->add_subcommand("export",
                                            "every matching record as JSON lines, "
                                            "newest first (admin only)")}) {
    c->add_option("--user", f.user, "only this user's requests");
    c->add_option("--pool", f.pool, "only requests about this pool or below it");
    c->add_option("--since", f.since, "only this recent: a duration (2h, 7d) or an RFC 3339 time");
  }
  CLI::App* list = audit->get_subcommand("list");
  list->add_option("--limit", f.limit, "at most this many (up to 1000)")->capture_default_str();
  list->callback([&ctx] {
    absl::StatusOr<int64_t> since = TimeFlagMillis("--since", f.since);
    if (!since.ok()) return ctx.Fail(since.status());
    v1::ListAuditRequest req = AuditRequest(f, *since);
    req.set_page_size(f.limit);
    std::optional<v1::ListAuditResponse> resp =
        Run(ctx, CallKind::kRead, &v1::AccessService::Stub::ListAudit, req);
    if (!resp) return;
    Table t({"seq", "time", "user", "source", "action", "pool", "target", "outcome", "message"});
    for (const v1::AuditEntry& e : resp->entries()) {
      t.AddRow({absl::StrCat(e.seq()), FormatUnixMillis(e.at_unix_ms()),
                e.user().empty() ? "-" : e.user(), e.source(), e.action(), e.pool(), e.target(),
                e.outcome(), e.message()});
    }
    std::cout << t.Render();
  });
  audit->get_subcommand("export")->callback([&ctx] {
    absl::StatusOr<int64_t> since = TimeFlagMillis("--since", f.since);
    if (!since.ok()) return ctx.Fail(since.status());
    v1::ListAuditRequest req = AuditRequest(f, *since);
    req.set_page_size(1000);
    google::protobuf::util::JsonPrintOptions one_line;
    one_line.preserve_proto_field_names = true;
    one_line.always_print_primitive_fields = true;
    do {
      absl::StatusOr<v1::ListAuditResponse> resp =
          Call(ctx.client, CallKind::kRead, &v1::AccessService::Stub::ListAudit, req);
      if (!resp.ok()) return ctx.Fail(resp.status());
      for (const v1::AuditEntry& e : resp->entries()) {
        std::string line;
        (void)google::protobuf::util::MessageToJsonString(e, &line, one_line);
        std::cout << line << "\n";
      }
      req.set_page_token(resp->next_page_token());
    } while (!req.page_token().empty());
    std::cout << std::flush;
  });
}

}  // namespace

void RegisterAccessCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* whoami = app.add_subcommand("whoami", "who the token acts as: user, role and scope");
  whoami->callback([&ctx] {
    std::optional<v1::WhoAmIResponse> resp =
        Run(ctx, CallKind::kRead, &v1::AccessService::Stub::WhoAmI, v1::WhoAmIRequest());
    if (!resp) return;
    std::cout << resp->user() << (resp->group().empty() ? "" : " (group " + resp->group() + ")")
              << ": " << resp->role() << (resp->role() == "admin" ? "" : " on " + resp->scope())
              << " (token " << resp->token_id() << ")" << std::endl;
  });
  RegisterTokenCommands(app, ctx);
  RegisterAuditCommands(app, ctx);
}

}  // namespace paceline::cli
