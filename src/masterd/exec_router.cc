#include "masterd/exec_router.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace paceline::masterd {

class ExecRouter::Channel final : public api::ExecChannel {
 public:
  Channel(ExecRouter* router, uint64_t id, std::shared_ptr<api::AgentLink> link)
      : router_(router), id_(id), link_(std::move(link)) {}
  ~Channel() override {
    if (!router_->Forget(id_)) return;  // the agent ended it, or its link went
    v1::MasterMessage msg;
    msg.mutable_exec_input()->set_session(id_);
    msg.mutable_exec_input()->set_cancel(true);
    link_->Send(std::move(msg));
  }
  bool Send(v1::ExecInput input) override {
    if (link_->closed()) return false;
    input.set_session(id_);
    v1::MasterMessage msg;
    *msg.mutable_exec_input() = std::move(input);
    link_->Send(std::move(msg));
    return true;
  }

 private:
  ExecRouter* const router_;
  const uint64_t id_;
  const std::shared_ptr<api::AgentLink> link_;
};

absl::StatusOr<std::unique_ptr<api::ExecChannel>> ExecRouter::Open(
    std::shared_ptr<api::AgentLink> link, v1::ExecStart start, api::ExecSink sink) {
  if (link == nullptr || link->closed()) {
    return absl::UnavailableError("the task's host is not connected to the master");
  }
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    id = next_id_++;
    sessions_[id] =
        Session{link.get(), link->host(), std::make_shared<api::ExecSink>(std::move(sink))};
  }
  start.set_session(id);
  v1::MasterMessage msg;
  *msg.mutable_exec_start() = std::move(start);
  link->Send(std::move(msg));
  return std::make_unique<Channel>(this, id, std::move(link));
}

void ExecRouter::Deliver(const api::AgentLink* link, const v1::ExecOutput& out) {
  std::shared_ptr<api::ExecSink> sink;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(out.session());
    if (it == sessions_.end() || it->second.link != link) return;
    sink = it->second.sink;
    if (out.exited() || !out.error().empty()) sessions_.erase(it);
  }
  (*sink)(out);
}

void ExecRouter::LinkGone(const api::AgentLink* link) {
  std::vector<std::pair<uint64_t, Session>> gone;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second.link == link) {
        gone.emplace_back(it->first, std::move(it->second));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& [id, s] : gone) {
    (*s.sink)(absl::UnavailableError(absl::StrCat("the connection to host ", s.host,
                                                  " was lost; the command's outcome is unknown")));
  }
}

bool ExecRouter::Forget(uint64_t id) {
  absl::MutexLock lock(&mu_);
  return sessions_.erase(id) > 0;
}

size_t ExecRouter::open_sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace paceline::masterd
