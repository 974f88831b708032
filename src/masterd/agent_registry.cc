#include "masterd/agent_registry.h"

#include <utility>
#include <vector>

#include "wire/agent_protocol.h"

namespace paceline::masterd {

void AgentRegistry::Attach(std::shared_ptr<api::AgentLink> session) {
  absl::MutexLock lock(&sessions_mu_);
  auto [it, inserted] = sessions_.try_emplace(session->host(), session);
  if (!inserted) {
    it->second->Close();  // a newer connection of the same agent replaces the old one
    it->second = std::move(session);
  }
}

void AgentRegistry::Detach(const api::AgentLink* session) {
  {
    absl::MutexLock lock(&sessions_mu_);
    auto it = sessions_.find(session->host());
    if (it != sessions_.end() && it->second.get() == session) sessions_.erase(it);
  }
  exec_.LinkGone(session);  // its exec sessions end with it
}

void AgentRegistry::Dispatch(const scheduler::Actions& actions) {
  absl::MutexLock lock(&sessions_mu_);
  // One burst per host: a link that batches sends a host's launches in one stream message.
  absl::flat_hash_map<api::AgentLink*, std::vector<v1::MasterMessage>> bursts;
  for (const scheduler::Launch& l : actions.launches) {
    auto it = sessions_.find(l.host);
    if (it == sessions_.end()) continue;  // the host is gone; it will be declared lost
    v1::MasterMessage msg = wire::ToLaunchMessage(l);
    if (on_launch_) on_launch_(l, *msg.mutable_launch());
    for (v1::GangPeer& peer : *msg.mutable_launch()->mutable_peers()) {
      auto s = sessions_.find(peer.host());
      if (s != sessions_.end()) peer.set_address(s->second->address());
    }
    bursts[it->second.get()].push_back(std::move(msg));
  }
  for (const jobmgr::KillCommand& k : actions.kills) {
    auto it = sessions_.find(k.host);
    if (it == sessions_.end()) continue;
    bursts[it->second.get()].push_back(wire::ToKillMessage(k));
  }
  for (auto& [link, msgs] : bursts) link->SendAll(std::move(msgs));
}

void AgentRegistry::Broadcast(const v1::MasterMessage& msg) {
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Send(msg);
}

void AgentRegistry::AbortAll() {
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Abort();  // ends the stream: they reconnect
}

void AgentRegistry::CloseAll() {
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Close();
}

std::string AgentRegistry::AddressOf(const std::string& host) {
  absl::MutexLock lock(&sessions_mu_);
  auto it = sessions_.find(host);
  return it == sessions_.end() ? "" : it->second->address();
}

bool AgentRegistry::SendTo(const std::string& host, v1::MasterMessage msg) {
  absl::MutexLock lock(&sessions_mu_);
  auto it = sessions_.find(host);
  if (it == sessions_.end() || it->second->closed()) return false;
  it->second->Send(std::move(msg));
  return true;
}

}  // namespace paceline::masterd
