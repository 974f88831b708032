#pragma once
// Actions: what the scheduler core asks its driver (the master, or `paceline sim`) to do after
// a call. The driver commits `batch` durably FIRST, and only then sends the launches and kills
// to the agents and answers the client: durable before acknowledged, and a task is recorded
// as launching on its host before the launch is sent.
//
// Thread-safety: value types.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "jobmgr/job_manager.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::scheduler {

// One member of a gang, as the launches of its gang list it.
struct GangPeer {
  uint32_t instance = 0;
  std::string host;
  std::vector<std::pair<std::string, uint32_t>> ports;  // port name -> host port
  std::string role;  // the member's role (job.roles); empty without roles
};

struct Launch {
  RunId run;
  std::string host;
  std::string pool;  // the job's pool (where the task's secrets are looked up)
  // The instance's effective task (overrides applied), shared with the job's spec.
  std::shared_ptr<const TaskSpec> task;
  std::vector<std::pair<std::string, uint32_t>> ports;  // port name -> host port
  std::vector<uint32_t> gpu_devices;                    // device indexes on the host
  uint32_t gang_size = 1;
  uint64_t spec_version = 0;  // the job version the run runs (the agent gets that spec)
  // The members of this task's gang (itself included), by instance: those placed with it, and
  // those whose run is live elsewhere (a member restarting alone still learns where the others
  // are); members without a live run are left out. Null for a task whose gang is of one.
  // Shared by the launches of one gang in one cycle.
  std::shared_ptr<const std::vector<GangPeer>> peers;
  std::string role;  // the instance's role (job.roles); empty without roles
  // The gang's rendezvous (job.gang): its kind, port name, and how many times the gang was
  // restarted together (a new rendezvous each time). kNone: peers.json alone.
  Rendezvous rendezvous = Rendezvous::kNone;
  std::string rendezvous_port;
  uint32_t gang_attempt = 0;
};

struct Actions {
  records::WriteBatch batch;
  std::vector<Launch> launches;
  std::vector<jobmgr::KillCommand> kills;
};

}  // namespace paceline::scheduler
