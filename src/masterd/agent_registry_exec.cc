// AgentRegistry: exec sessions, opened on a host's current link and routed by ExecRouter.

#include "masterd/agent_registry.h"

namespace paceline::masterd {

absl::StatusOr<std::unique_ptr<api::ExecChannel>> AgentRegistry::OpenExec(const std::string& host,
                                                                          v1::ExecStart start,
                                                                          api::ExecSink sink) {
  std::shared_ptr<api::AgentLink> link;
  {
    absl::MutexLock lock(&sessions_mu_);
    if (auto it = sessions_.find(host); it != sessions_.end()) link = it->second;
  }
  if (link == nullptr) {
    return absl::UnavailableError("host " + host + " is not connected to the master");
  }
  return exec_.Open(std::move(link), std::move(start), std::move(sink));
}

void AgentRegistry::DeliverExec(const api::AgentLink* link, const v1::ExecOutput& out) {
  exec_.Deliver(link, out);
}

}  // namespace paceline::masterd
