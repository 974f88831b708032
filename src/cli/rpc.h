#pragma once
// The CLI's one way to talk to the master. Rpc is a command's connection: the configured masters
// (one or several, cli/client_config.h), the token, how long the command may take, and a gRPC
// channel to the master it talks to now. Every call site says whether its call is a read or a
// write (CallKind, cli/retry.h); the whole life of a typical client command is
//
//   absl::StatusOr<v1::GetPoolResponse> resp =
//       Call(ctx.client, CallKind::kRead, &v1::PoolService::Stub::GetPool, req);
//
// and Run() adds what every command does next: a failure fails the command, and -o json|yaml
// prints the response; only a table is left for the command to print:
//
//   std::optional<v1::GetPoolResponse> resp =
//       Run(ctx, CallKind::kRead, &v1::PoolService::Stub::GetPool, req);
//   if (!resp) return;
//
// Streams (`job watch`) use Invoke() directly.
//
// Where a call goes first: a write to the master that led last (at first the first configured
// one); with several masters and --reads spread (the default), a read to one master picked at
// random for the command, so that many clients' reads spread over the masters (a standby
// answers them from its copy of the store, docs/operations.md "Reads on standbys"). Reads carry
// the revision of this client's last write (paceline-min-revision, common/answer_stamp.h: from
// this command, or an earlier one through cli/write_revision.h), so that they reflect it; a
// standby that is too stale or has not reached it refuses naming the leader, and the read goes
// there. A read answered by a standby more than a second behind says so on stderr.
//
// One attempt connects to the current master (at most kConnectTimeout), then sends the call on
// the connected channel. What is retried (the verdicts of cli/retry.h):
//   - A connection that never came up (refused, no answer, name not resolved): nothing was sent,
//     so reads and writes are retried: at the next configured master at once, and once every
//     master failed, after a back-off (200 ms doubling to 2 s, with jitter).
//   - A refusal by a master that does not lead, naming the leader (cli/leader_hint.h): it did
//     nothing, so reads and writes go to the leader at once — if the leader is one of the
//     configured masters: the token goes only where the user sent it. A client given one
//     master talks to that master only and fails at once with the refusal, which names the
//     leader; with several, an unlisted leader is passed over for the next configured master.
//   - UNAVAILABLE or DEADLINE_EXCEEDED once the call was sent on a connected channel (the
//     master went away, restarted, is reloading its state, or did not answer): a read is
//     retried; a write is not, since the master may have carried it out: the command fails
//     saying so, and the user looks before trying again.
//   - Anything else is the master's answer.
// Each retry prints one line on stderr (RetryLine in cli/retry.h; set_retry_sink redirects it):
//   paceline: master 127.0.0.1:5390 unavailable (connection refused); retrying in 0.4s
//   (attempt 3, 12s left)
//
// How long: a one-shot command gives up --timeout (default 30s) after Connect(), all its calls
// and retries together. A command that runs long sets its own deadline (set_deadline): `job wait
// JOB --timeout 90s` retries until then; with none (absl::InfiniteFuture(): `job watch`, `task
// logs -f`, a wait without --timeout), an outage may last --timeout from its first failed
// attempt. One attempt of a unary call waits at most --timeout for its answer.
//
// A failure is an absl::Status whose message says what to do about it: an unreachable master
// says where the CLI looked, for how long, and how to start one; a refused token says where
// tokens come from; anything else is the master's own message, which names the field. The
// exit code for a failure is CommandContext::Fail's (cli/context.h).
//
// Thread-safety: one Rpc per command; not shared.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/client_config.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/retry.h"

namespace paceline::cli {

class Rpc {
 public:
  // How long one attempt waits for its connection to come up.
  static constexpr absl::Duration kConnectTimeout = absl::Seconds(3);

  // Resolves the masters and the token and parses --timeout; connects lazily, at the first call.
  static absl::StatusOr<Rpc> Connect(const ClientFlags& flags);

  // The master that answered last (before any call: the first configured one).
  const std::string& address() const { return masters_.current(); }
  // The time by which the command gives up; absl::InfiniteFuture(): each outage may last
  // --timeout instead.
  void set_deadline(absl::Time deadline) {
    deadline_ = deadline;
    own_deadline_ = true;
  }
  // Where the retry lines go (default: std::cerr, one line each).
  void set_retry_sink(std::function<void(const std::string&)> sink) { sink_ = std::move(sink); }
  // A context with the token, and `deadline` unless it is absl::InfiniteFuture().
  std::unique_ptr<grpc::ClientContext> Context(absl::Time deadline) const;

  // One attempt: a connected channel and a fresh context. A stream sets `answered` once the
  // master sent something, so that a later failure counts as a new outage.
  struct Attempt {
    std::shared_ptr<grpc::Channel> channel;
    grpc::ClientContext* context = nullptr;
    bool answered = false;
  };
  // Makes `attempt` until it succeeds or the rules above stop it. `stream`: the attempt reads a
  // stream, and its context has no deadline.
  absl::Status Invoke(CallKind kind, absl::FunctionRef<grpc::Status(Attempt&)> attempt,
                      bool stream = false);

  // One unary call of `Stub` (e.g. &v1::JobService::Stub::GetJob), retried as above.
  template <typename Stub, typename Req, typename Resp>
  absl::StatusOr<Resp> Call(CallKind kind,
                            grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                            const Req& req) {
    Resp resp;
    absl::Status s = Invoke(kind, [&](Attempt& a) {
      Stub stub(a.channel);
      resp.Clear();
      return (stub.*method)(a.context, req, &resp);
    });
    if (!s.ok()) return s;
    return resp;
  }

 private:
  Rpc(ResolvedClient client, absl::Duration timeout, bool spread_reads);

  // The end of the time a call may retry in, for an outage that began at `began`.
  absl::Time Limit(absl::Time began) const;
  // Connects the channel to the current master by `until`; a failure is the reason (nothing
  // was sent) and drops the channel, so the next attempt connects afresh.
  grpc::Status Ready(absl::Time until);
  // The error for a call that failed with `f` at `addr`; `after` says how long it tried.
  absl::Status Explain(const Failure& f, const std::string& addr, const std::string& after) const;
  absl::Status MaybeDone(const Failure& f, const std::string& addr) const;
  absl::Status NotLeader(const Failure& f, const std::string& addr) const;
  // After a call of `kind` answered by the current master: where the next such call goes, and
  // the revision of a write (its answer's stamp).
  void Answered(CallKind kind, const grpc::ClientContext& ctx);

  ResolvedClient client_;
  MasterRotation masters_;
  std::string writer_;         // where writes go first: the master that led last
  std::string reader_;         // where reads go first
  int64_t min_revision_ = -1;  // this client's last write; -1: none known
  absl::Duration timeout_;
  absl::Time deadline_;
  bool own_deadline_ = false;               // set_deadline was called
  std::shared_ptr<grpc::Channel> channel_;  // to channel_addr_; null after a failed connect
  std::string channel_addr_;
  Backoff backoff_;
  std::function<void(const std::string&)> sink_;
};

// Connects with the command's flags and makes one unary call.
template <typename Stub, typename Req, typename Resp>
absl::StatusOr<Resp> Call(const ClientFlags& flags, CallKind kind,
                          grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                          const Req& req) {
  absl::StatusOr<Rpc> rpc = Rpc::Connect(flags);
  if (!rpc.ok()) return rpc.status();
  return rpc->Call(kind, method, req);
}

// Call(), then: a failure fails the command (nullopt); -o json|yaml prints the response
// (nullopt); a table format returns the response for the command to print.
template <typename Stub, typename Req, typename Resp>
std::optional<Resp> Run(CommandContext& ctx, CallKind kind,
                        grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                        const Req& req) {
  absl::StatusOr<Resp> resp = Call(ctx.client, kind, method, req);
  if (!resp.ok()) {
    ctx.Fail(resp.status());
    return std::nullopt;
  }
  if (PrintStructured(ctx.client, *resp)) return std::nullopt;
  return *std::move(resp);
}

}  // namespace paceline::cli
