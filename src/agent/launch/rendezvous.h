#pragma once
// Rendezvous: the conventions by which a framework's processes find each other, made from a
// gang's peers (docs/frameworks.md). Pure functions of (this instance, the gang's peers, the
// rendezvous the master chose, the host's interfaces): no I/O; the gang hook (gang_hook.h)
// writes the files and adds the variables.
//
//   pytorch     MASTER_ADDR, MASTER_PORT: the gang's first member (by instance) and its port
//               named `rendezvous.port`; WORLD_SIZE, RANK (by instance); LOCAL_RANK,
//               LOCAL_WORLD_SIZE (the members on this host), GROUP_RANK, GROUP_WORLD_SIZE (the
//               hosts, in the order of their first member); ROLE_NAME, ROLE_RANK,
//               ROLE_WORLD_SIZE; TORCHELASTIC_RESTART_COUNT (the gang's attempt): what
//               torchrun's static rendezvous sets. GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME
//               name the interface that holds this host's address, when one does, so that the
//               collectives use the address the peers were given.
//   mpi         a hostfile, SANDBOX/hostfile: one line per distinct host address in the order
//               of its first member, `ADDRESS slots=N` with N its members; PACELINE_MPI_HOSTFILE
//               and OpenMPI's default-hostfile variables (4.x: OMPI_MCA_orte_default_hostfile,
//               5.x: PRTE_MCA_prte_default_hostfile) point at it.
//   tensorflow  TF_CONFIG: {"cluster": {TYPE: ["ADDRESS:PORT", ...]}, "task": {"type": TYPE,
//               "index": I}}, TYPE the member's role when it is one of TensorFlow's (chief,
//               worker, ps, evaluator, master), otherwise (and without roles) "worker"; PORT each
//               member's port named `rendezvous.port`; the members of a type by instance.
//   always      PACELINE_ROLE (with a role), PACELINE_GANG_ATTEMPT (with a rendezvous).
//
// A member's address is the one the master knows its agent by; when it is unknown, its host's
// name stands in (it must then resolve on the peers' hosts).
//
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/base/launch_request.h"

namespace paceline::agent {

// One network interface of this host and one of its addresses (getifaddrs).
struct NetInterface {
  std::string name;
  std::string address;
};

struct RendezvousPlan {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;  // name in the sandbox -> content
};

struct RendezvousInput {
  uint32_t instance = 0;
  const std::map<uint32_t, GangPeer>* peers = nullptr;  // the gang's members, this one included
  GangRendezvousRequest rendezvous;
  std::string sandbox;
  std::vector<NetInterface> interfaces;  // this host's (pytorch's *_SOCKET_IFNAME)
};

// The variables and files of `in.rendezvous.kind` (kNone: PACELINE_GANG_ATTEMPT alone).
// InvalidArgument when this instance is not among the peers, when a port the convention needs
// is missing, or when the first member is absent (pytorch).
absl::StatusOr<RendezvousPlan> PlanRendezvous(const RendezvousInput& in);

// The parts, for tests and for other conventions built on them.
absl::StatusOr<std::map<std::string, std::string>> PyTorchEnv(const RendezvousInput& in);
std::string MpiHostfile(const std::map<uint32_t, GangPeer>& peers);
absl::StatusOr<std::string> TfConfig(const RendezvousInput& in);

// The address a member is reached at: its address, else its host's name.
const std::string& PeerAddress(const GangPeer& peer);

}  // namespace paceline::agent
