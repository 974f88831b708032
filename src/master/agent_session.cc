#include "master/agent_session.h"

namespace paceline::master {

AgentSession::AgentSession(std::string host, AgentStream* stream)
    : host_(std::move(host)), stream_(stream), writer_([this] { WriterLoop(); }) {}

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

}  // namespace paceline::master
