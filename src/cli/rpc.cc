#include "cli/rpc.h"

#include <iostream>
#include <map>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/leader_hint.h"
#include "cli/write_revision.h"
#include "common/answer_stamp.h"
#include "common/units.h"
#include "paceline/v1/cluster.grpc.pb.h"

namespace paceline::cli {
namespace {

// TLS verified against `ca_pem` (the cluster's CA), or plain text without one.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& addr, const std::string& ca_pem) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  // A channel of its own for each attempt after a failure: a fresh connection, not one that
  // gRPC's shared pool keeps in its own (much longer) reconnect back-off.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (ca_pem.empty()) {
    return grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = ca_pem;
  return grpc::CreateCustomChannel(addr, grpc::SslCredentials(tls), args);
}

// Why a channel that could not connect failed: a call that fails at once rather than wait
// (cluster info, a read every master answers) carries gRPC's last connection error. It is sent
// only if the connection came up meanwhile; then it answers with anything but UNAVAILABLE.
grpc::Status Probe(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(false);
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  v1::GetInfoResponse resp;
  return v1::ClusterService::Stub(channel).GetInfo(&ctx, v1::GetInfoRequest(), &resp);
}

// Time left for a last attempt: a connection on loopback or a LAN comes up well within it.
constexpr absl::Duration kLastAttempt = absl::Milliseconds(200);

std::string Seconds(absl::Duration d) {
  return FormatDurationShort(absl::Trunc(d, absl::Milliseconds(100)));
}

}  // namespace

Rpc::Rpc(ResolvedClient client, absl::Duration timeout, bool spread_reads)
    : client_(std::move(client)),
      masters_(client_.addrs),
      writer_(client_.addrs.front()),
      reader_(writer_),
      timeout_(timeout),
      deadline_(absl::Now() + timeout),
      sink_([](const std::string& line) { std::cerr << line << std::endl; }) {
  if (client_.addrs.size() > 1) {
    if (spread_reads) {
      std::minstd_rand rng{std::random_device{}()};
      reader_ = client_.addrs[rng() % client_.addrs.size()];
    }
    min_revision_ = LoadWriteRevision(client_.addrs);
  }
}

void Rpc::Answered(CallKind kind, const grpc::ClientContext& ctx) {
  const std::multimap<grpc::string_ref, grpc::string_ref>& trailers =
      ctx.GetServerTrailingMetadata();
  auto value = [&](const char* key) {
    auto it = trailers.find(key);
    return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
  };
  const std::string served_by = value(kServedByKey);
  int64_t revision = -1;
  if (!absl::SimpleAtoi(value(kRevisionKey), &revision)) revision = -1;
  if (kind == CallKind::kWrite) {
    writer_ = masters_.current();
    if (served_by != "standby" && revision > min_revision_) {
      min_revision_ = revision;
      if (client_.addrs.size() > 1) SaveWriteRevision(client_.addrs, revision);
    }
    return;
  }
  reader_ = masters_.current();
  if (served_by == "leader" && revision >= 0 && revision < min_revision_) {
    // The leader has committed less than this client's last write: that write went to another
    // database behind the same addresses (the cluster was made again). Forget it, or every
    // read would wait on the standbys for a revision they never reach.
    min_revision_ = revision;
    SaveWriteRevision(client_.addrs, revision, /*may_lower=*/true);
  }
  int64_t staleness_ms = 0;
  if (served_by == "standby" && absl::SimpleAtoi(value(kStalenessKey), &staleness_ms) &&
      staleness_ms >= 1000) {
    sink_(absl::StrCat("paceline: answered by the standby at ", masters_.current(),
                       " from its copy of the store, ", Seconds(absl::Milliseconds(staleness_ms)),
                       " old (revision ", revision, ")"));
  }
}

absl::StatusOr<Rpc> Rpc::Connect(const ClientFlags& flags) {
  absl::StatusOr<absl::Duration> timeout = ParseDurationStrict(flags.timeout);
  if (!timeout.ok()) return WithFlag(timeout.status(), "--timeout");
  if (*timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--timeout: must be more than 0, e.g. 30s");
  }
  absl::StatusOr<ResolvedClient> client = ResolveClient(flags);
  if (!client.ok()) return client.status();
  return Rpc(*std::move(client), *timeout, flags.reads != "leader");
}

std::unique_ptr<grpc::ClientContext> Rpc::Context(absl::Time deadline) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (deadline != absl::InfiniteFuture()) ctx->set_deadline(absl::ToChronoTime(deadline));
  if (!client_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + client_.token);
  return ctx;
}

absl::Time Rpc::Limit(absl::Time began) const {
  return deadline_ == absl::InfiniteFuture() ? began + timeout_ : deadline_;
}

grpc::Status Rpc::Ready(absl::Time until) {
  const std::string& addr = masters_.current();
  if (!channel_ || channel_addr_ != addr) {
    channel_ = NewChannel(addr, client_.ca_pem);
    channel_addr_ = addr;
  }
  grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      grpc::Status why = Probe(channel_);
      if (why.error_code() != grpc::StatusCode::UNAVAILABLE) return grpc::Status::OK;
      channel_.reset();
      return why;
    }
    if (!channel_->WaitForStateChange(state, absl::ToChronoTime(until))) {
      channel_.reset();
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "no answer");
    }
    state = channel_->GetState(/*try_to_connect=*/true);
  }
  return grpc::Status::OK;
}

absl::Status Rpc::Invoke(CallKind kind, absl::FunctionRef<grpc::Status(Attempt&)> attempt,
                         bool stream) {
  masters_.NewRound();
  masters_.MoveTo(kind == CallKind::kRead ? reader_ : writer_);
  backoff_.Reset();
  std::optional<absl::Time> began;  // when the first failed attempt of this outage started
  int attempts = 0;
  while (true) {
    ++attempts;
    absl::Time start = absl::Now();
    absl::Time limit = Limit(began.value_or(start));
    Failure f;
    f.status = Ready(std::min(limit, start + kConnectTimeout));
    if (f.status.ok()) {
      std::unique_ptr<grpc::ClientContext> ctx =
          Context(stream ? absl::InfiniteFuture() : std::min(limit, start + timeout_));
      if (kind == CallKind::kRead && min_revision_ >= 0) {
        ctx->AddMetadata(kMinRevisionKey, absl::StrCat(min_revision_));
      }
      Attempt a{channel_, ctx.get()};
      f.status = attempt(a);
      if (f.status.ok()) {
        Answered(kind, *ctx);
        return absl::OkStatus();
      }
      f.reached = true;
      f.leader = LeaderOf(*ctx, f.status);
      if (f.leader && masters_.Listed(*f.leader)) writer_ = *f.leader;
      if (f.status.error_code() == grpc::StatusCode::UNAVAILABLE) channel_.reset();
      if (a.answered) {  // a stream that worked for a while: this is a new outage
        began.reset();
        attempts = 1;
        masters_.NewRound();
        backoff_.Reset();
        start = absl::Now();
      }
    }
    if (!began) began = start;
    const std::string failed = masters_.current();
    switch (Classify(kind, f)) {
      case Verdict::kFinal:
        return Explain(f, failed, "");
      case Verdict::kMaybeDone:
        return MaybeDone(f, failed);
      case Verdict::kRedirect:
        if (!masters_.Listed(*f.leader) && masters_.all().size() == 1) return NotLeader(f, failed);
        break;
      case Verdict::kRetry:
        break;
    }
    bool at_once = masters_.Next(f.leader);
    absl::Duration delay = at_once ? absl::ZeroDuration() : backoff_.Next();
    absl::Time now = absl::Now();
    limit = Limit(*began);
    // The last attempt comes just before the limit rather than not at all.
    delay = std::min(delay, limit - now - kLastAttempt);
    if (delay < absl::ZeroDuration()) {
      std::string bound =
          deadline_ == absl::InfiniteFuture()
              ? absl::StrCat("--timeout ", FormatDurationShort(timeout_), " per outage")
          : own_deadline_ ? "the command's --timeout"
                          : absl::StrCat("--timeout ", FormatDurationShort(timeout_));
      return Explain(
          f, failed,
          absl::StrCat("; gave up after ", attempts, attempts == 1 ? " attempt" : " attempts",
                       " in ", Seconds(now - *began), " (", bound, ")"));
    }
    sink_(RetryLine(failed, ReasonOf(f), masters_.current(), delay, attempts + 1, limit - now));
    absl::SleepFor(delay);
  }
}

absl::Status Rpc::Explain(const Failure& f, const std::string& addr,
                          const std::string& after) const {
  // gRPC's codes are the canonical codes absl::StatusCode names, one for one.
  absl::StatusCode code = static_cast<absl::StatusCode>(f.status.error_code());
  const std::string& msg = f.status.error_message();
  if (!f.leader && !f.reached) {
    std::string where =
        masters_.all().size() == 1
            ? absl::StrCat("the master at ", addr)
            : absl::StrCat("any of the masters at ", absl::StrJoin(masters_.all(), ","));
    std::string last = masters_.all().size() == 1 ? "" : absl::StrCat("; the last tried: ", addr);
    return absl::UnavailableError(absl::StrCat(
        "cannot reach ", where, " (from ", client_.addr_source, last, "): ", ReasonOf(f), after,
        "; is it running? Start one with `make up` or `paceline up`",
        client_.ca_pem.empty()
            ? ". If it serves TLS (the default), give the cluster's CA: --ca FILE, $PACELINE_CA, "
              "ca: in ~/.paceline/config, or ./data/tls/ca.pem (the master's DATA_DIR/tls/ca.pem)"
            : absl::StrCat(". The master's certificate is checked against the CA of ",
                           client_.ca_source, ": is it this cluster's?")));
  }
  if (!f.leader && code == absl::StatusCode::kUnavailable) {
    return absl::UnavailableError(
        absl::StrCat("the master at ", addr, " is unavailable: ", ReasonOf(f), after));
  }
  if (code == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(
        absl::StrCat("the master at ", addr, " did not answer in time", after));
  }
  if (code == absl::StatusCode::kUnauthenticated) {
    return absl::UnauthenticatedError(
        absl::StrCat(msg, " (the master at ", addr,
                     " wants its token: --token, $PACELINE_TOKEN, token: in ~/.paceline/config, or "
                     "./data/token)"));
  }
  return absl::Status(code, absl::StrCat(msg, after));
}

absl::Status Rpc::MaybeDone(const Failure& f, const std::string& addr) const {
  return absl::UnavailableError(
      absl::StrCat("the master at ", addr, " failed during the call (", ReasonOf(f),
                   "), so the change may or may not have been made; a change is never sent "
                   "twice by itself: look (a get or list command) before trying again"));
}

absl::Status Rpc::NotLeader(const Failure& f, const std::string& addr) const {
  return absl::Status(
      static_cast<absl::StatusCode>(f.status.error_code()),
      absl::StrCat("the master at ", addr, " does not lead (", f.status.error_message(),
                   "); the CLI sends calls only to the masters it was given (from ",
                   client_.addr_source, "): to follow the leader, give it too, e.g. --addr ", addr,
                   ",", *f.leader));
}

}  // namespace paceline::cli
