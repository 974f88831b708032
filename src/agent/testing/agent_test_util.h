#pragma once
// Test support for the agent: temporary work dirs, a config pointing at the built wrapper, a
// driver that runs the runtime until a condition holds (never a blind sleep), and an event log.
//
// Thread-safety: test thread only.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/base/agent_config.h"
#include "agent/base/launch_request.h"
#include "agent/base/task_event.h"
#include "agent/task_runtime.h"

namespace paceline::agent::testing {

// A fresh directory under /tmp (mode 0755, so task users can reach what is inside), removed
// with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The built wrapper and test helper (paths compiled in by CMake).
std::string WrapperPath();
std::string HelperPath();

// A config for a test agent: unique name, the given work dir, a port range of its own.
AgentConfig TestConfig(const std::string& work_dir);
// Removes the agent's (empty) cgroup directories after a test.
void RemoveAgentCgroups(const AgentConfig& config);

LaunchRequest Req(uint64_t job, uint32_t instance, uint32_t run, const std::string& command);
inline RunId MakeRun(uint64_t job, uint32_t instance, uint32_t run) {
  return RunId{TaskId{JobId(job), instance}, run};
}

// Every event delivered so far (fetched with PendingEvents and acknowledged).
class EventLog {
 public:
  explicit EventLog(TaskRuntime* rt) : rt_(rt) {}
  void Drain();
  void Reset(TaskRuntime* rt) { rt_ = rt; }
  std::vector<TaskEvent> For(const RunId& run) const;
  std::optional<TaskEvent> Terminal(const RunId& run) const;
  std::optional<TaskEvent> Last(const RunId& run, TaskEventType type) const;
  const std::vector<TaskEvent>& all() const { return all_; }

 private:
  TaskRuntime* rt_;
  std::vector<TaskEvent> all_;
};

// Runs the runtime (and drains events) until `pred` holds or `timeout` passes.
bool RunUntil(TaskRuntime& rt, EventLog& log, const std::function<bool()>& pred,
              absl::Duration timeout = absl::Seconds(20));
// Runs until `run` has a terminal event; returns it.
std::optional<TaskEvent> WaitTerminal(TaskRuntime& rt, EventLog& log, const RunId& run,
                                      absl::Duration timeout = absl::Seconds(20));
// Kills every run with grace 0 and waits for them to end (test teardown).
void KillAllAndWait(TaskRuntime& rt, EventLog& log);

std::string ReadAll(const std::string& path);
// Whether the process `pid` exists and is not a zombie.
bool PidAlive(int pid);

}  // namespace paceline::agent::testing
