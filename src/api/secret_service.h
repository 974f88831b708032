#pragma once
// SecretServiceImpl: gRPC adapter for paceline.v1.SecretService — secrets of pools, put and
// deleted by admins and pool-admins, listed without values by whoever may read the pool.
// No method ever answers a value: it goes from PutSecretRequest to the store sealed, and from
// there only to the agent of a task that names it (masterd/secret_book.h).
//
// Thread-safety: handlers run on gRPC threads; all state lives behind SecretRecords.

#include "api/access_control.h"
#include "api/secret_records.h"
#include "paceline/v1/secret.grpc.pb.h"

namespace paceline::api {

class SecretServiceImpl final : public v1::SecretService::Service {
 public:
  SecretServiceImpl(SecretRecords* secrets, AccessControl* access)
      : secrets_(secrets), access_(access) {}

  grpc::Status PutSecret(grpc::ServerContext* ctx, const v1::PutSecretRequest* req,
                         v1::PutSecretResponse* resp) override;
  grpc::Status ListSecrets(grpc::ServerContext* ctx, const v1::ListSecretsRequest* req,
                           v1::ListSecretsResponse* resp) override;
  grpc::Status DeleteSecret(grpc::ServerContext* ctx, const v1::DeleteSecretRequest* req,
                            v1::DeleteSecretResponse* resp) override;
  grpc::Status RekeySecrets(grpc::ServerContext* ctx, const v1::RekeySecretsRequest* req,
                            v1::RekeySecretsResponse* resp) override;

 private:
  SecretRecords* const secrets_;
  AccessControl* const access_;
};

// OK when every secret a task of `spec` names (the template's, each role's, each override's)
// resolves from `pool`; INVALID_ARGUMENT naming the first that does not, at its field
// ("roles[1].task.secrets[0].name"), with the command that would create it. Null `secrets`:
// none resolves.
absl::Status CheckSecretRefs(const SecretRecords* secrets, const std::string& pool,
                             const JobSpec& spec);

}  // namespace paceline::api
