#include "agent/launch/rendezvous.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

// Where `in.instance` stands among the peers, or an error naming it.
absl::StatusOr<std::map<uint32_t, GangPeer>::const_iterator> Self(const RendezvousInput& in) {
  if (in.peers == nullptr || in.peers->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous ", RendezvousName(in.rendezvous.kind),
                     ": the launch has no peers; expected the gang's members"));
  }
  auto self = in.peers->find(in.instance);
  if (self == in.peers->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous ", RendezvousName(in.rendezvous.kind), ": instance ", in.instance,
                     " is not among its gang's peers; expected it in the launch's peer list"));
  }
  return self;
}

absl::StatusOr<uint16_t> RendezvousPort(const RendezvousInput& in, uint32_t instance,
                                        const GangPeer& peer) {
  auto it = peer.ports.find(in.rendezvous.port);
  if (it == peer.ports.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous ", RendezvousName(in.rendezvous.kind), ": instance ", instance,
                     " has no port named '", in.rendezvous.port,
                     "'; expected the gang's rendezvous port (job.gang.port) among its ports"));
  }
  return it->second;
}

// A member's host: its name, else its address.
const std::string& HostKey(const GangPeer& p) { return p.host.empty() ? p.address : p.host; }

// TensorFlow's task type of a role.
std::string TfType(const std::string& role) {
  for (const char* t : {"chief", "worker", "ps", "evaluator", "master"}) {
    if (role == t) return role;
  }
  return "worker";
}

}  // namespace

const std::string& PeerAddress(const GangPeer& peer) {
  return peer.address.empty() ? peer.host : peer.address;
}

absl::StatusOr<std::map<std::string, std::string>> PyTorchEnv(const RendezvousInput& in) {
  auto self = Self(in);
  if (!self.ok()) return self.status();
  const auto& [first_instance, first] = *in.peers->begin();
  absl::StatusOr<uint16_t> master_port = RendezvousPort(in, first_instance, first);
  if (!master_port.ok()) return master_port.status();
  const GangPeer& me = (*self)->second;

  uint32_t rank = 0, local_rank = 0, local_world = 0, role_rank = 0, role_world = 0;
  std::vector<std::string> hosts;  // in the order of their first member
  for (const auto& [instance, p] : *in.peers) {
    const std::string& host = HostKey(p);
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    if (instance < in.instance) {
      ++rank;
      if (host == HostKey(me)) ++local_rank;
      if (p.role == me.role) ++role_rank;
    }
    if (host == HostKey(me)) ++local_world;
    if (p.role == me.role) ++role_world;
  }
  const size_t group_rank = std::find(hosts.begin(), hosts.end(), HostKey(me)) - hosts.begin();

  std::map<std::string, std::string> env = {
      {"MASTER_ADDR", PeerAddress(first)},
      {"MASTER_PORT", absl::StrCat(*master_port)},
      {"WORLD_SIZE", absl::StrCat(in.peers->size())},
      {"RANK", absl::StrCat(rank)},
      {"LOCAL_RANK", absl::StrCat(local_rank)},
      {"LOCAL_WORLD_SIZE", absl::StrCat(local_world)},
      {"GROUP_RANK", absl::StrCat(group_rank)},
      {"GROUP_WORLD_SIZE", absl::StrCat(hosts.size())},
      {"ROLE_NAME", me.role.empty() ? "default" : me.role},
      {"ROLE_RANK", absl::StrCat(role_rank)},
      {"ROLE_WORLD_SIZE", absl::StrCat(role_world)},
      {"TORCHELASTIC_RESTART_COUNT", absl::StrCat(in.rendezvous.attempt)},
  };
  if (!me.address.empty()) {
    for (const NetInterface& i : in.interfaces) {
      if (i.address != me.address) continue;
      env["GLOO_SOCKET_IFNAME"] = i.name;
      env["NCCL_SOCKET_IFNAME"] = i.name;
      break;
    }
  }
  return env;
}

std::string MpiHostfile(const std::map<uint32_t, GangPeer>& peers) {
  std::vector<std::pair<std::string, uint32_t>> slots;  // address -> members, by first member
  for (const auto& [instance, p] : peers) {
    const std::string& address = PeerAddress(p);
    auto it =
        std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == address; });
    if (it == slots.end()) {
      slots.emplace_back(address, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [address, n] : slots) absl::StrAppend(&out, address, " slots=", n, "\n");
  return out;
}

absl::StatusOr<std::string> TfConfig(const RendezvousInput& in) {
  auto self = Self(in);
  if (!self.ok()) return self.status();
  nlohmann::json cluster = nlohmann::json::object();
  std::string my_type;
  size_t my_index = 0;
  for (const auto& [instance, p] : *in.peers) {
    absl::StatusOr<uint16_t> port = RendezvousPort(in, instance, p);
    if (!port.ok()) return port.status();
    const std::string type = TfType(p.role);
    nlohmann::json& members = cluster[type];
    if (members.is_null()) members = nlohmann::json::array();
    if (instance == in.instance) {
      my_type = type;
      my_index = members.size();
    }
    members.push_back(absl::StrCat(PeerAddress(p), ":", *port));
  }
  nlohmann::json config = {{"cluster", cluster},
                           {"task", {{"type", my_type}, {"index", my_index}}}};
  return config.dump();
}

absl::StatusOr<RendezvousPlan> PlanRendezvous(const RendezvousInput& in) {
  RendezvousPlan plan;
  plan.env["PACELINE_GANG_ATTEMPT"] = absl::StrCat(in.rendezvous.attempt);
  switch (in.rendezvous.kind) {
    case Rendezvous::kNone:
      break;
    case Rendezvous::kPyTorch: {
      auto env = PyTorchEnv(in);
      if (!env.ok()) return env.status();
      plan.env.merge(*env);
      break;
    }
    case Rendezvous::kMpi: {
      auto self = Self(in);
      if (!self.ok()) return self.status();
      plan.files["hostfile"] = MpiHostfile(*in.peers);
      const std::string path = absl::StrCat(in.sandbox, "/hostfile");
      plan.env["PACELINE_MPI_HOSTFILE"] = path;
      plan.env["OMPI_MCA_orte_default_hostfile"] = path;
      plan.env["PRTE_MCA_prte_default_hostfile"] = path;
      break;
    }
    case Rendezvous::kTensorFlow: {
      auto config = TfConfig(in);
      if (!config.ok()) return config.status();
      plan.env["TF_CONFIG"] = *std::move(config);
      break;
    }
  }
  return plan;
}

}  // namespace paceline::agent
