#pragma once
// AccessControl: who is calling, and whether it may (docs/security.md). One object per master,
// shared by the gRPC services, the gRPC interceptor (access_interceptor.h) and the HTTP router.
//
// A call is authenticated by its bearer token: one of the master's bootstrap tokens (its token
// files: the admin's and the agents'), a token of the store (access/token.h), which must be
// neither revoked nor expired, or a task's credential (access/task_credential.h), signed with
// AccessOptions::task_key, not expired, and whose run still lives (AccessRecords::CheckRunLive).
// Then the permission table (access/permissions.h) decides:
//   - the interceptor calls BeginCall when a call's metadata arrives (the method's entry, the
//     caller, the client's address, a request id) and EndCall with the status it answers;
//   - BeginCall asks the gate (Gate::admit) whether this master serves the call, before it
//     authenticates: a standby answers the reads it may (access::Permission::followed) once
//     its copy of the store reflects the revision the call asks for, and refuses the rest;
//   - every handler calls Check first, with what the call is about (the pool, the job's owner,
//     the agent's host). Check answers the gate's refusal first (a standby's, which names the
//     leader: masterd/leadership.h), then UNAUTHENTICATED or PERMISSION_DENIED, or OK. A
//     method without an entry is refused. A checked call's answer carries its stamp
//     (AnswerMetadata, common/answer_stamp.h);
//   - a call that answers without having passed Check has its answer emptied (MayAnswer, at
//     the interceptor's send) and its status replaced by INTERNAL: a handler that forgot its
//     check leaks nothing;
//   - EndCall writes an audit record for every call of a mutation, every refusal, and every call
//     made with a task's credential (reads too: as "task:JOB/INSTANCE/RUN"). Refusals
//     are recorded at most kRefusalsPerMinute a minute per client address (the others are
//     counted and logged), so that requests without a token cannot fill the store. A master
//     that does not serve (a standby) writes nothing: it may not write to the store;
//   - EndCallsOf(token) cancels the open calls (watches, agent streams) made with a token, when
//     it is revoked.
// HTTP routes are guarded by AllowHttp, through the same table ("GET /metrics").
//
// Without any credential configured (no bootstrap token, no records) authentication is off and
// every call is allowed: only for tests of other parts.
//
// Thread-safety: every method is thread-safe.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "access/permissions.h"
#include "access/role.h"
#include "common/answer_stamp.h"
#include "http/http_message.h"
#include "records/records.h"

namespace paceline::api {

// The durable side of access control, which the master implements over its store.
class AccessRecords {
 public:
  virtual ~AccessRecords() = default;
  virtual std::optional<records::TokenRecord> FindToken(const std::string& id) const = 0;
  virtual std::vector<records::TokenRecord> ListTokens() const = 0;
  // Durable (and then used) when OK; UNAVAILABLE when this master does not serve.
  virtual absl::Status PutToken(records::TokenRecord token) = 0;
  // Appends to the audit log without waiting; a record that cannot be written is logged.
  virtual void Audit(records::AuditRecord record) = 0;
  virtual absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) = 0;
  // OK when run `run` of task job/instance is live (launching or running, not being stopped);
  // UNAUTHENTICATED saying why not. A task's credential is valid only while its run lives.
  virtual absl::Status CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const {
    (void)job, (void)instance, (void)run;
    return absl::UnauthenticatedError("this master does not accept task credentials");
  }
};

struct AccessOptions {
  // With TLS: an agent must present a client certificate of the cluster whose common name is
  // the host it registers as (CheckAgentCertificate).
  bool agents_need_certificates = false;
  // The key that signs task credentials (access::DeriveTaskKey); empty: they are refused.
  std::string task_key;
  // With certificates needed: OK, or PERMISSION_DENIED when the agent's certificate (PEM) was
  // revoked (`paceline host revoke-cert`). Empty: none is.
  std::function<absl::Status(const std::string& cert_pem)> certificate_revoked;
};

// A token from one of the master's files and who it acts as.
struct BootstrapCredential {
  std::string token;
  access::Principal who;
};

// Who answered a call and how fresh its answer is, sent back in the call's trailing metadata
// (common/answer_stamp.h): a client that wrote at revision R asks a standby for at least R.
struct AnswerStamp {
  std::string served_by;  // "leader" or "standby"; empty: a master alone
  int64_t revision = -1;  // a standby's: the store revision its answer reflects at least
  absl::Duration staleness = absl::ZeroDuration();  // a standby's: its copy's age
};

// What the master says of itself, call by call (masterd/core_keeper.h).
struct Gate {
  // Before a call is served: its stamp when this master serves it, or why not (a standby's
  // refusal names the leader). `followed_read`: a read that a standby may answer from its
  // followed state (access::Permission::followed); `at_least`: the revision the answer must
  // reflect (-1: any), which a standby waits for a little.
  std::function<absl::StatusOr<AnswerStamp>(bool followed_read, int64_t at_least)> admit;
  // At the end of a call a leader served: the revision of everything it has committed
  // (-1: unknown), what the caller asks standbys for to read its writes.
  std::function<int64_t()> committed_revision;
};

class AccessControl {
 public:
  // `records` may be null (bootstrap tokens only); an empty `gate` always serves.
  AccessControl(std::vector<BootstrapCredential> bootstrap, AccessRecords* records, Gate gate,
                AccessOptions options = {});

  // Who presents `authorization` (an HTTP/gRPC header value) at `now`.
  absl::StatusOr<access::Principal> Authenticate(absl::string_view authorization,
                                                 absl::Time now) const;
  bool enabled() const { return enabled_; }
  AccessRecords* records() const { return records_; }

  // --- one gRPC call.
  // `min_revision`: the call's kMinRevisionKey metadata ("" when absent).
  void BeginCall(grpc::ServerContextBase* call, absl::string_view method,
                 absl::string_view authorization, std::string source, std::string request_id,
                 const std::string& min_revision = "");
  // The trailing metadata that stamps a call's answer (AnswerStamp), once it passed Check.
  std::vector<std::pair<std::string, std::string>> AnswerMetadata(
      const grpc::ServerContextBase* call) const;
  // Whether the call may send an answer: it passed Check, or needs no credential.
  bool MayAnswer(const grpc::ServerContextBase* call) const;
  // The status to answer instead of `status`, if any; forgets the call.
  std::optional<grpc::Status> EndCall(const grpc::ServerContextBase* call,
                                      const grpc::Status& status);
  // Cancels every open call made with the token `token_id`.
  void EndCallsOf(const std::string& token_id);
  // Cancels the open agent streams registered as `host` (whatever their token).
  void EndAgentCallsOf(const std::string& host);

  static constexpr int kRefusalsPerMinute = 30;

  // --- in a handler, first thing.
  grpc::Status Check(const grpc::ServerContextBase* ctx, access::Target target = {});
  // An agent's stream registering as `host`: OK, or PERMISSION_DENIED when certificates are
  // needed and the connection's verified certificate is missing, names another host, or was
  // revoked.
  grpc::Status CheckAgentCertificate(const grpc::ServerContextBase* ctx,
                                     const std::string& host) const;
  // The caller of a call (nullopt when authentication is off or the caller is unknown).
  std::optional<access::Principal> Caller(const grpc::ServerContextBase* ctx) const;

  // --- HTTP: true when `req`, routed by `route` ("GET /metrics"), may be served; otherwise
  // `res` holds the refusal (401 or 403).
  bool AllowHttp(const http::HttpRequest& req, absl::string_view route, http::HttpResponse& res);

 private:
  struct Call {
    grpc::ServerContextBase* context = nullptr;
    const access::Permission* permission = nullptr;
    absl::StatusOr<access::Principal> caller;
    std::string method;
    std::string source;
    std::string request_id;
    access::Target target;
    bool checked = false;
    // A refused task credential whose signature holds: the task it names, for the audit log.
    std::string claimed_task;
    // The gate's answer (Gate::admit): the answer's stamp, or why this master does not serve
    // the call.
    absl::StatusOr<AnswerStamp> admitted;
  };
  // The gate's answer for a call with the kMinRevisionKey metadata `min_revision` ("": none);
  // INVALID_ARGUMENT when that is not a revision.
  absl::StatusOr<AnswerStamp> Admit(bool followed_read, const std::string& min_revision) const;
  // "task:JOB/INSTANCE/RUN" when `authorization` carries a task credential signed with the key
  // (expired or not); "" otherwise.
  std::string ClaimedTask(absl::string_view authorization) const;
  void WriteAudit(const Call& call, absl::StatusCode code, absl::string_view message);
  // Whether a refusal from `source` is still within its minute's allowance.
  bool AllowRefusalRecord(const std::string& source, absl::Time now);

  const std::vector<BootstrapCredential> bootstrap_;
  AccessRecords* const records_;
  const Gate gate_;
  const AccessOptions options_;
  const bool enabled_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, Call> calls_ ABSL_GUARDED_BY(mu_);
  struct Allowance {
    absl::Time minute = absl::InfinitePast();
    int recorded = 0;
    int dropped = 0;
  };
  absl::Mutex refusals_mu_;
  absl::flat_hash_map<std::string, Allowance> refusals_ ABSL_GUARDED_BY(refusals_mu_);
};

// The client certificate the call's connection presented and TLS verified (PEM); "" when none.
std::string PeerCertificatePem(const grpc::ServerContextBase& ctx);

}  // namespace paceline::api
