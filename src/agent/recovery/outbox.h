#pragma once
// Outbox: the durable, ordered stream of task events waiting for the master's acknowledgement.
//
// Append() numbers an event with the next sequence number (1, 2, ...; never reused, also across
// restarts) and stores it in <work_dir>/outbox/events, an AppendLog of "E <event json>",
// "A <seq>" (acknowledged up to seq) and "N <next seq>" lines. Pending() returns the events not
// yet acknowledged, oldest first; Ack(seq) acknowledges every event up to seq (cumulative, like a
// stream offset). Unacknowledged events survive restarts: delivery is at least once and the
// master dedupes by sequence number. Compaction rewrites the file to the pending events once
// the acknowledged ones dominate.
//
// Thread-safety: not thread-safe; owned by the runtime.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/task_event.h"
#include "agent/logs/append_log.h"

namespace paceline::agent {

class Outbox {
 public:
  static absl::StatusOr<std::unique_ptr<Outbox>> Open(const std::string& dir);

  // Stores `event` with the next sequence number, which it returns.
  absl::StatusOr<uint64_t> Append(TaskEvent event);
  // Unacknowledged events, oldest first, at most `max`.
  std::vector<TaskEvent> Pending(size_t max = SIZE_MAX) const;
  // Acknowledges every event with seq <= `seq`. Acking beyond the last event is InvalidArgument.
  absl::Status Ack(uint64_t seq);
  absl::Status Sync();

  uint64_t last_seq() const { return next_seq_ - 1; }
  uint64_t acked_seq() const { return acked_; }
  size_t pending_count() const { return pending_.size(); }
  bool dirty() const { return dirty_; }

 private:
  explicit Outbox(std::unique_ptr<AppendLog> log) : log_(std::move(log)) {}
  absl::Status MaybeCompact();

  std::unique_ptr<AppendLog> log_;
  struct Entry {
    TaskEvent event;
    int64_t bytes;  // of its line in the log
  };
  std::deque<Entry> pending_;
  uint64_t next_seq_ = 1;
  uint64_t acked_ = 0;
  int64_t pending_bytes_ = 0;
  bool dirty_ = false;
};

}  // namespace paceline::agent
