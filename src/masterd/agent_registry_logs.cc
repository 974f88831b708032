// AgentRegistry: a run's logs, asked of its host's agent and answered on its stream.

#include "absl/strings/str_cat.h"
#include "masterd/agent_registry.h"

namespace paceline::masterd {

absl::StatusOr<v1::LogResponse> AgentRegistry::FetchLogs(const std::string& host,
                                                         v1::LogRequest request,
                                                         absl::Duration timeout) {
  auto waiter = std::make_shared<LogWaiter>();
  waiter->host = host;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&logs_mu_);
    id = next_log_request_++;
    log_waiters_[id] = waiter;
  }
  request.set_request_id(id);
  v1::MasterMessage msg;
  *msg.mutable_logs() = std::move(request);
  const bool sent = SendTo(host, std::move(msg));
  bool answered = sent && waiter->done.WaitForNotificationWithTimeout(timeout);
  {
    absl::MutexLock lock(&logs_mu_);
    log_waiters_.erase(id);
  }
  if (!sent) {
    return absl::UnavailableError(
        absl::StrCat("host ", host, " is not connected; its logs cannot be read now"));
  }
  if (!answered) {
    return absl::UnavailableError(absl::StrCat("host ", host, " did not send the logs in time"));
  }
  if (!waiter->response.error().empty()) {
    return absl::NotFoundError(absl::StrCat("host ", host, ": ", waiter->response.error()));
  }
  return waiter->response;
}

void AgentRegistry::DeliverLogs(const std::string& host, const v1::LogResponse& response) {
  absl::MutexLock lock(&logs_mu_);
  auto it = log_waiters_.find(response.request_id());
  if (it == log_waiters_.end()) return;  // too late: the caller gave up
  if (it->second->host != host) return;  // not asked of this host
  it->second->response = response;
  it->second->done.Notify();
}

}  // namespace paceline::masterd
