#include "api/agent_session.h"

#include "absl/strings/strip.h"

namespace paceline::api {

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

AgentSession::AgentSession(std::string host, AgentStream* stream, grpc::ServerContext* ctx,
                           std::string address)
    : host_(std::move(host)),
      address_(std::move(address)),
      stream_(stream),
      ctx_(ctx),
      writer_([this] { WriterLoop(); }) {}

AgentSession::~AgentSession() {
  Close();
  Join();
}

void AgentSession::Join() {
  if (writer_.joinable() && writer_.get_id() != std::this_thread::get_id()) writer_.join();
}

void AgentSession::Send(v1::MasterMessage msg) {
  absl::MutexLock lock(&mu_);
  if (closing_ || broken_) return;
  out_.push_back(std::move(msg));
}

void AgentSession::Close() {
  absl::MutexLock lock(&mu_);
  closing_ = true;
}

void AgentSession::Abort() {
  absl::MutexLock lock(&mu_);
  if (!closing_) ctx_->TryCancel();  // before Close(), the handler and its context are alive
}

bool AgentSession::closed() const {
  absl::MutexLock lock(&mu_);
  return closing_ || broken_;
}

void AgentSession::WriterLoop() {
  while (true) {
    v1::MasterMessage msg;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closing_ || !out_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (out_.empty()) return;  // closing and drained
      msg = std::move(out_.front());
      out_.pop_front();
    }
    if (!stream_->Write(msg)) {
      absl::MutexLock lock(&mu_);
      broken_ = true;
      out_.clear();
      return;
    }
  }
}

}  // namespace paceline::api
