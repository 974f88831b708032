#pragma once
// LaunchRequest: what the master asks the agent to run — one run of one task instance — and
// its validation. The TaskSpec is the user's spec (command, resources, ports, env, health,
// kill_grace, volume, user); the rest is what the master decided at placement time.
//
// Thread-safety: value types.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/ids.h"
#include "spec/job_spec.h"

namespace paceline::agent {

// Where one member of a gang runs: the host, its address and its named ports.
struct GangPeer {
  std::string host;
  std::map<std::string, uint16_t> ports;
  std::string address;  // the host's IP address as the master knows it; empty if unknown
  std::string role;     // its role (job.roles); empty without roles
  friend bool operator==(const GangPeer&, const GangPeer&) = default;
};

// How the gang meets (job.gang.rendezvous): the environment and files its framework reads,
// made by the gang hook from `peers` (docs/frameworks.md).
struct GangRendezvousRequest {
  Rendezvous kind = Rendezvous::kNone;
  std::string port;      // the port name the rendezvous uses
  uint32_t attempt = 0;  // the gang's restarts together so far
  friend bool operator==(const GangRendezvousRequest&, const GangRendezvousRequest&) = default;
};

struct LaunchRequest {
  RunId run;
  TaskSpec spec;
  // Ports the master already chose, by name (each must be in the agent's range and free).
  // Every other name in spec.ports gets a dynamic port from the agent.
  std::map<std::string, uint16_t> ports;
  // GPU device indexes the master chose; empty = the agent picks devices for spec's gpu amount.
  std::vector<int> gpu_devices;
  // The gang's members, instance id -> peer; written to peers.json in the sandbox.
  std::optional<std::map<uint32_t, GangPeer>> peers;
  std::optional<GangRendezvousRequest> rendezvous;  // only with peers
  std::string role;                                 // the instance's role; empty without roles
  // The values of spec.secrets, by name: held in memory for the launch, never written to the
  // agent's disk but into the task's secrets directory. When the master could not give them,
  // `secret_error` says why and the launch fails with it.
  std::map<std::string, std::string> secret_values;
  std::string secret_error;
  // A task with an identity: its credential, written into the sandbox by the identity hook
  // (launch/identity_hook.h); never into the agent's own files. Empty: no identity.
  std::string task_token;
  friend bool operator==(const LaunchRequest&, const LaunchRequest&) = default;
};

// Rejects requests that can never run: empty command, bad port names, a health or readiness
// check on an undeclared port (or with an empty command, or a non-positive interval or timeout),
// negative resources or grace, env names that are not NAME=value-able, a secret the master could
// not give (FAILED_PRECONDITION) or a secret file name with a '/'.
absl::Status ValidateLaunchRequest(const LaunchRequest& request);

// "http-api" -> "HTTP_API": the suffix of PACELINE_PORT_<NAME>.
std::string PortEnvSuffix(absl::string_view port_name);

}  // namespace paceline::agent
