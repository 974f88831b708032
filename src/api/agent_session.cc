#include "api/agent_session.h"

#include <arpa/inet.h>

#include <deque>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "api/grpc_status.h"
#include "wire/stream_batch.h"

namespace paceline::api {

bool IsIpAddress(const std::string& text) {
  in6_addr ip;
  return ::inet_pton(AF_INET, text.c_str(), &ip) == 1 ||
         ::inet_pton(AF_INET6, text.c_str(), &ip) == 1;
}

std::string AddressOfPeer(const std::string& peer) {
  absl::string_view p = peer;
  if (absl::ConsumePrefix(&p, "ipv4:")) {
    size_t colon = p.rfind(':');
    return std::string(colon == absl::string_view::npos ? p : p.substr(0, colon));
  }
  if (absl::ConsumePrefix(&p, "ipv6:")) {
    // "%5B::1%5D:5123" (URL-escaped) or "[::1]:5123".
    std::string s(p);
    for (auto [from, to] : {std::pair{"%5B", "["}, std::pair{"%5D", "]"}}) {
      for (size_t i = s.find(from); i != std::string::npos; i = s.find(from)) s.replace(i, 3, to);
    }
    size_t open = s.find('['), close = s.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) return "";
    return s.substr(open + 1, close - open - 1);
  }
  return "";
}

namespace {

class AgentStream;

// The writing half of a stream, and the AgentLink the cluster holds: it may outlive the
// stream (then every Send is dropped). All state is under mu_; gRPC operations are started
// outside it (a reaction may run on the thread that starts the operation).
class StreamLink final : public AgentLink {
 public:
  // `batches`: the agent reads MasterMessage.batch (its register said so).
  StreamLink(std::string host, std::string address, std::string certificate_pem, bool batches,
             AgentStream* stream, grpc::CallbackServerContext* ctx)
      : host_(std::move(host)),
        address_(std::move(address)),
        certificate_pem_(std::move(certificate_pem)),
        batches_(batches),
        stream_(stream),
        ctx_(ctx) {}

  const std::string& host() const override { return host_; }
  const std::string& address() const override { return address_; }
  const std::string& certificate_pem() const override { return certificate_pem_; }
  void Send(v1::MasterMessage msg) override;
  void SendAll(std::vector<v1::MasterMessage> msgs) override;
  void Close() override {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  bool closed() const override {
    absl::MutexLock lock(&mu_);
    return closing_ || broken_ || stream_ == nullptr;
  }
  void Abort() override {
    absl::MutexLock lock(&mu_);
    if (!closing_ && stream_ != nullptr) ctx_->TryCancel();
  }

  // The stream's reactions. OnWriteDone: the next message to write, if any. EndReads: whether
  // the stream may finish now (no write in flight); otherwise the last write finishes it.
  const v1::MasterMessage* OnWriteDone(bool ok, bool& finish);
  bool EndReads();
  void Detach() {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
  }

 private:
  // Send and SendAll: moves `msgs` to the queue, and starts writing if no write is in flight.
  void Queue(absl::Span<v1::MasterMessage> msgs);

  const std::string host_;
  const std::string address_;
  const std::string certificate_pem_;
  const bool batches_;
  mutable absl::Mutex mu_;
  AgentStream* stream_ ABSL_GUARDED_BY(mu_);  // null once gRPC is done with it
  grpc::CallbackServerContext* const ctx_;    // valid while stream_ is set
  // Front: being written. What queues behind it goes as one batch when the agent reads them.
  std::deque<v1::MasterMessage> out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class AgentStream final : public AgentReactor {
 public:
  AgentStream(grpc::CallbackServerContext* ctx, Backend* cluster, AccessControl* access)
      : ctx_(ctx), cluster_(cluster), access_(access) {
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return EndReads(grpc::Status::OK);  // the agent left, or the stream was cancelled
    if (conn_ == nullptr) {
      // The first message: registering waits for the store, off gRPC's threads.
      std::thread([this] { Register(); }).detach();
      return;
    }
    absl::Status s = conn_->OnMessage(in_);
    if (!s.ok()) return EndReads(ToGrpcStatus(s));
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    if (const v1::MasterMessage* next = link_->OnWriteDone(ok, finish)) {
      StartWrite(next);
    } else if (finish) {
      Finish(status_);
    }
  }

  void OnDone() override {
    if (link_ != nullptr) link_->Detach();
    delete this;
  }

 private:
  void Register() {
    const std::string& host = in_.register_().host();
    access::Target as_host{.host = host, .object = absl::StrCat("host ", host)};
    grpc::Status checked = access_->Check(ctx_, as_host);
    if (checked.ok()) checked = access_->CheckAgentCertificate(ctx_, host);
    if (!checked.ok()) return Finish(checked);
    // The host's address: the one the agent was given (--address), else where it connects from.
    std::string address = in_.register_().address();
    if (address.empty()) {
      address = AddressOfPeer(ctx_->peer());
    } else if (!IsIpAddress(address)) {
      return Finish(ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat("register.address: '", address, "' is not an IPv4 or IPv6 address"))));
    }
    link_ = std::make_shared<StreamLink>(host, std::move(address), PeerCertificatePem(*ctx_),
                                         in_.register_().accepts_batches(), this, ctx_);
    absl::StatusOr<std::unique_ptr<AgentProtocol>> conn = cluster_->OpenAgent(link_, in_);
    if (!conn.ok()) return EndReads(ToGrpcStatus(conn.status()));
    conn_ = *std::move(conn);
    StartRead(&in_);
  }

  void EndReads(grpc::Status status) {
    if (conn_ != nullptr) conn_->Close();  // detaches the link from the cluster
    status_ = std::move(status);
    if (link_ == nullptr || link_->EndReads()) Finish(status_);
  }

  grpc::CallbackServerContext* const ctx_;
  Backend* const cluster_;
  AccessControl* const access_;
  v1::AgentMessage in_;
  std::shared_ptr<StreamLink> link_;  // set once the first message is checked
  std::unique_ptr<AgentProtocol> conn_;
  grpc::Status status_;  // what the stream finishes with, once reads ended
};

void StreamLink::Send(v1::MasterMessage msg) { Queue(absl::MakeSpan(&msg, 1)); }

void StreamLink::SendAll(std::vector<v1::MasterMessage> msgs) { Queue(absl::MakeSpan(msgs)); }

void StreamLink::Queue(absl::Span<v1::MasterMessage> msgs) {
  AgentStream* stream = nullptr;
  const v1::MasterMessage* first = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (closing_ || broken_ || finished_ || stream_ == nullptr || msgs.empty()) return;
    // A deque: the message being written does not move.
    for (v1::MasterMessage& m : msgs) out_.push_back(std::move(m));
    if (writing_) return;
    writing_ = true;
    if (batches_) wire::PackFront(out_);
    stream = stream_;
    first = &out_.front();
  }
  stream->StartWrite(first);  // the stream cannot finish while writing_ is set
}

const v1::MasterMessage* StreamLink::OnWriteDone(bool ok, bool& finish) {
  absl::MutexLock lock(&mu_);
  out_.pop_front();
  if (!ok) {
    broken_ = true;
    out_.clear();
  }
  if (!out_.empty()) {
    if (batches_) wire::PackFront(out_);
    return &out_.front();
  }
  writing_ = false;
  finish = reads_done_ && !std::exchange(finished_, true);
  return nullptr;
}

bool StreamLink::EndReads() {
  absl::MutexLock lock(&mu_);
  reads_done_ = true;
  return !writing_ && !std::exchange(finished_, true);
}

}  // namespace

AgentReactor* NewAgentStream(grpc::CallbackServerContext* ctx, Backend* cluster,
                             AccessControl* access) {
  return new AgentStream(ctx, cluster, access);
}

}  // namespace paceline::api
