#include "agent/launch/gang_hook.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "common/status.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

// Writes SANDBOX/name, owned by the task's user.
absl::Status WriteTaskFile(const RunContext& ctx, const std::string& path,
                           const std::string& content) {
  RETURN_IF_ERROR(WriteFile(path, content, 0600));
  if (ctx.user.uid >= 0 && ::chown(path.c_str(), static_cast<uid_t>(ctx.user.uid),
                                   static_cast<gid_t>(ctx.user.gid)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("chown ", path));
  }
  return absl::OkStatus();
}

}  // namespace

std::string GangHook::PeersJson(const std::map<uint32_t, GangPeer>& peers) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [instance, peer] : peers) {
    nlohmann::json ports = nlohmann::json::object();
    for (const auto& [name, port] : peer.ports) ports[name] = port;
    nlohmann::json entry = {{"host", peer.host}, {"ports", ports}};
    if (!peer.address.empty()) entry["address"] = peer.address;
    if (!peer.role.empty()) entry["role"] = peer.role;
    j[std::to_string(instance)] = std::move(entry);
  }
  return j.dump(2) + "\n";
}

std::vector<NetInterface> GangHook::HostInterfaces() {
  std::vector<NetInterface> out;
  struct ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (struct ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_name == nullptr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    const void* addr = nullptr;
    if (i->ifa_addr->sa_family == AF_INET) {
      addr = &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      addr = &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr;
    } else {
      continue;
    }
    if (::inet_ntop(i->ifa_addr->sa_family, addr, buf, sizeof(buf)) == nullptr) continue;
    out.push_back({i->ifa_name, buf});
  }
  ::freeifaddrs(list);
  return out;
}

absl::Status GangHook::Prepare(RunContext& ctx) {
  const LaunchRequest& r = ctx.request;
  if (!r.role.empty()) ctx.env["PACELINE_ROLE"] = r.role;
  if (!r.peers) return absl::OkStatus();
  std::string path = absl::StrCat(ctx.sandbox, "/peers.json");
  RETURN_IF_ERROR(WriteTaskFile(ctx, path, PeersJson(*r.peers)));
  ctx.env["PACELINE_PEERS_FILE"] = path;
  if (!r.rendezvous) return absl::OkStatus();

  RendezvousInput in;
  in.instance = r.run.task.instance;
  in.peers = &*r.peers;
  in.rendezvous = *r.rendezvous;
  in.sandbox = ctx.sandbox;
  if (r.rendezvous->kind == Rendezvous::kPyTorch) in.interfaces = HostInterfaces();
  absl::StatusOr<RendezvousPlan> plan = PlanRendezvous(in);
  if (!plan.ok()) return plan.status();
  for (const auto& [name, content] : plan->files) {
    RETURN_IF_ERROR(WriteTaskFile(ctx, absl::StrCat(ctx.sandbox, "/", name), content));
  }
  for (auto& [name, value] : plan->env) {
    if (!absl::StartsWith(name, "PACELINE_") && r.spec.env.contains(name)) continue;
    ctx.env[name] = std::move(value);
  }
  return absl::OkStatus();
}

}  // namespace paceline::agent
