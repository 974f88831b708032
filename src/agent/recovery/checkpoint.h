#pragma once
// Checkpoint: the durable record of every run the agent is responsible for, so that a restarted
// agent (after kill -9 or a reboot) knows what it launched. Stored in <work_dir>/checkpoint/runs
// as an AppendLog of "P <RunContext json>" (put: the run's latest record) and "D <run key>"
// (the run is over and reported) lines; compacted to the live records when mostly garbage.
//
// Durability: Put/Remove are visible to a restarted agent immediately (page cache); Sync() makes
// them survive a machine crash, and the runtime calls it once per batch (Poll), not per task.
// Ordering with the supervisor's run request (wrapper_protocol.h) guarantees that no task runs
// without a record holding its supervisor's pid and start time.
//
// Thread-safety: not thread-safe; owned by the runtime.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/run_context.h"
#include "agent/logs/append_log.h"

namespace paceline::agent {

class Checkpoint {
 public:
  // Opens (creating) the checkpoint in `dir` and loads the live records.
  static absl::StatusOr<std::unique_ptr<Checkpoint>> Open(const std::string& dir);

  // The records found at Open (moved out once, for recovery); malformed lines are skipped and
  // counted in skipped_records().
  std::vector<RunContext> TakeLoaded() { return std::move(loaded_); }
  size_t skipped_records() const { return skipped_; }

  absl::Status Put(const RunContext& ctx);
  absl::Status Remove(const std::string& key);
  absl::Status Sync();

  size_t live() const { return live_.size(); }

 private:
  explicit Checkpoint(std::unique_ptr<AppendLog> log) : log_(std::move(log)) {}
  absl::Status MaybeCompact();

  std::unique_ptr<AppendLog> log_;
  std::map<std::string, std::string> live_;  // key -> its latest "P ..." line
  int64_t live_bytes_ = 0;
  std::vector<RunContext> loaded_;
  size_t skipped_ = 0;
};

}  // namespace paceline::agent
