#pragma once
// Effects: what a call of the job manager asks its caller to do (the contract is in
// job_manager.h): the write batch to commit first, the tasks for the resource manager (enqueue,
// withdraw, release), and the launches and kills for the agents.
//
// Thread-safety: value types.

#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/reasons.h"
#include "records/records.h"

namespace paceline::jobmgr {

// The placement engine's decision for one run, as one value from the engine to the launch
// message: the host, the named ports it holds there and the GPU devices it was given.
struct Placement {
  std::string host;
  std::vector<std::pair<std::string, uint32_t>> ports;  // port name -> host port
  std::vector<uint32_t> gpu_devices;                    // device indexes on the host
};

struct LaunchCommand {
  RunId run;
  Placement placed;
};

struct KillCommand {
  RunId run;
  std::string host;
  absl::Duration grace;
  TaskReason reason;
  // A run that served traffic keeps running this long after leaving its endpoints before its
  // SIGTERM (task.deregistration_delay); zero for the others.
  absl::Duration deregistration_delay = absl::ZeroDuration();
};

struct Effects {
  records::WriteBatch batch;
  std::vector<TaskId> enqueue;
  std::vector<TaskId> withdraw;
  std::vector<TaskId> release;
  std::vector<LaunchCommand> launches;
  std::vector<KillCommand> kills;
};

}  // namespace paceline::jobmgr
