#include "api/secret_service.h"

#include "absl/strings/str_cat.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "common/status.h"
#include "secrets/secret_path.h"
#include "spec/pool_path.h"
#include "wire/core.h"

namespace paceline::api {
namespace {

v1::SecretInfo InfoOf(const records::SecretRecord& r) {
  v1::SecretInfo info;
  info.set_path(r.path);
  absl::StatusOr<secrets::SecretPath> p = secrets::ParseSecretPath(r.path);
  if (p.ok()) {
    info.set_pool(p->pool);
    info.set_name(p->name);
  }
  info.set_created_by(r.created_by);
  info.set_created_at_unix_ms(wire::ToUnixMillis(r.created_at));
  info.set_updated_at_unix_ms(wire::ToUnixMillis(r.updated_at));
  info.set_key_id(r.key_id);
  return info;
}

// Parses `raw` into `out` and checks that the caller may make this call about it.
grpc::Status CheckPath(AccessControl& access, grpc::ServerContext* ctx, const std::string& raw,
                       secrets::SecretPath& out) {
  absl::StatusOr<secrets::SecretPath> path = secrets::ParseSecretPath(raw);
  if (!path.ok()) {
    if (grpc::Status a = access.Check(ctx, {.object = "secret"}); !a.ok()) return a;
    return ToGrpcStatus(path.status());
  }
  out = *std::move(path);
  return access.Check(ctx, {.pool = out.pool, .object = absl::StrCat("secret ", out.full)});
}

}  // namespace

grpc::Status SecretServiceImpl::PutSecret(grpc::ServerContext* ctx, const v1::PutSecretRequest* req,
                                          v1::PutSecretResponse* resp) {
  secrets::SecretPath path;
  if (grpc::Status a = CheckPath(*access_, ctx, req->path(), path); !a.ok()) return a;
  if (req->value().size() > secrets::kMaxValueBytes) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("value: ", req->value().size(), " bytes; a secret holds at most ",
                     secrets::kMaxValueBytes, " bytes")));
  }
  std::optional<access::Principal> who = access_->Caller(ctx);
  absl::StatusOr<records::SecretRecord> put =
      secrets_->Put(path.full, req->value(), who ? who->user : "anonymous", req->replace());
  if (!put.ok()) return ToGrpcStatus(put.status());
  *resp->mutable_info() = InfoOf(*put);
  return grpc::Status::OK;
}

grpc::Status SecretServiceImpl::ListSecrets(grpc::ServerContext* ctx,
                                            const v1::ListSecretsRequest* req,
                                            v1::ListSecretsResponse* resp) {
  const std::string pool = req->pool().empty() ? "/" : req->pool();
  if (absl::Status s = spec::ValidatePoolPath(pool); !s.ok()) {
    if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat("pool: ", s.message())));
  }
  // No pool given: every secret the caller may read (a listing, filtered).
  access::Target target;
  if (!req->pool().empty()) target.pool = pool;
  if (grpc::Status a = access_->Check(ctx, target); !a.ok()) return a;
  const std::optional<access::Principal> who = access_->Caller(ctx);
  for (const records::SecretRecord& r :
       secrets_->List(pool, req->recursive() || req->pool().empty())) {
    absl::StatusOr<secrets::SecretPath> p = secrets::ParseSecretPath(r.path);
    if (p.ok() && MayRead(who, p->pool)) *resp->add_secrets() = InfoOf(r);
  }
  return grpc::Status::OK;
}

grpc::Status SecretServiceImpl::DeleteSecret(grpc::ServerContext* ctx,
                                             const v1::DeleteSecretRequest* req,
                                             v1::DeleteSecretResponse*) {
  secrets::SecretPath path;
  if (grpc::Status a = CheckPath(*access_, ctx, req->path(), path); !a.ok()) return a;
  return ToGrpcStatus(secrets_->Delete(path.full));
}

grpc::Status SecretServiceImpl::RekeySecrets(grpc::ServerContext* ctx,
                                             const v1::RekeySecretsRequest*,
                                             v1::RekeySecretsResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.object = "secrets"}); !a.ok()) return a;
  absl::StatusOr<std::pair<std::string, uint32_t>> done = secrets_->Rekey();
  if (!done.ok()) return ToGrpcStatus(done.status());
  resp->set_key_id(done->first);
  resp->set_resealed(done->second);
  return grpc::Status::OK;
}

namespace {

// `prefix`: where the task sits in the spec ("task", "roles[1].task", "instance_overrides.3").
absl::Status CheckTaskSecretRefs(const SecretRecords* secrets, const std::string& pool,
                                 const TaskSpec& task, absl::string_view prefix) {
  for (size_t i = 0; i < task.secrets.size(); ++i) {
    const std::string& name = task.secrets[i].name;
    if (secrets != nullptr && secrets->Resolve(pool, name).has_value()) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, ".secrets[", i, "].name: no secret ", name, " in ", pool,
        pool == "/" ? "" : " or a pool above it", "; create it: paceline secret create ",
        secrets::JoinSecretPath(pool, name), " --from-file FILE"));
  }
  if (task.container && !task.container->pull_secret.empty()) {
    const std::string& name = task.container->pull_secret;
    if (secrets == nullptr || !secrets->Resolve(pool, name).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, ".container.pull_secret: no secret ", name, " in ", pool,
                       pool == "/" ? "" : " or a pool above it",
                       "; create it with the registry's USER:PASSWORD: paceline secret create ",
                       secrets::JoinSecretPath(pool, name), " --from-file FILE"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSecretRefs(const SecretRecords* secrets, const std::string& pool,
                             const JobSpec& spec) {
  RETURN_IF_ERROR(CheckTaskSecretRefs(secrets, pool, spec.task, "task"));
  for (size_t i = 0; i < spec.roles.size(); ++i) {
    RETURN_IF_ERROR(CheckTaskSecretRefs(secrets, pool, spec.roles[i].task,
                                        absl::StrCat("roles[", i, "].task")));
  }
  for (const auto& [index, o] : spec.instance_overrides) {
    RETURN_IF_ERROR(
        CheckTaskSecretRefs(secrets, pool, o.task, absl::StrCat("instance_overrides.", index)));
  }
  return absl::OkStatus();
}

}  // namespace paceline::api
