#include "agent/launch/gang_hook.h"

#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "common/status.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {

std::string GangHook::PeersJson(const std::map<uint32_t, GangPeer>& peers) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [instance, peer] : peers) {
    nlohmann::json ports = nlohmann::json::object();
    for (const auto& [name, port] : peer.ports) ports[name] = port;
    nlohmann::json entry = {{"host", peer.host}, {"ports", ports}};
    if (!peer.address.empty()) entry["address"] = peer.address;
    j[std::to_string(instance)] = std::move(entry);
  }
  return j.dump(2) + "\n";
}

absl::Status GangHook::Prepare(RunContext& ctx) {
  if (!ctx.request.peers) return absl::OkStatus();
  std::string path = absl::StrCat(ctx.sandbox, "/peers.json");
  RETURN_IF_ERROR(WriteFile(path, PeersJson(*ctx.request.peers), 0600));
  if (ctx.user.uid >= 0 && ::chown(path.c_str(), static_cast<uid_t>(ctx.user.uid),
                                   static_cast<gid_t>(ctx.user.gid)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("chown ", path));
  }
  ctx.env["PACELINE_PEERS_FILE"] = path;
  return absl::OkStatus();
}

}  // namespace paceline::agent
