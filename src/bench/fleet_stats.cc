#include "bench/fleet_stats.h"

#include "absl/strings/str_cat.h"

namespace paceline::bench {

void FleetStats::OnLaunched(const RunId& run, absl::Time at) {
  Add(launches_);
  if (forward_ != nullptr) forward_->OnLaunched(run, at);
}

void FleetStats::OnSent(const RunId& run, FakeRunState state, absl::Time at) {
  switch (state) {
    case FakeRunState::kRunning:
      Add(running_sent_);
      break;
    case FakeRunState::kSucceeded:
      Add(succeeded_sent_);
      break;
    case FakeRunState::kKilled:
      Add(killed_sent_);
      break;
  }
  if (forward_ != nullptr) forward_->OnSent(run, state, at);
}

void FleetStats::OnAcked(const RunId& run, FakeRunState state, absl::Time at, absl::Time acked) {
  switch (state) {
    case FakeRunState::kRunning:
      Add(running_acked_);
      break;
    case FakeRunState::kSucceeded:
      Add(succeeded_acked_);
      break;
    case FakeRunState::kKilled:
      Add(killed_acked_);
      break;
  }
  if (forward_ != nullptr) forward_->OnAcked(run, state, at, acked);
}

void FleetStats::Received(const v1::MasterMessage& msg) {
  if (msg.has_batch()) {
    Add(batches_in_);
    for (const v1::MasterMessage& m : msg.batch().messages()) Received(m);
    return;
  }
  Add(messages_in_);
  if (msg.has_kill()) Add(kills_);
  if (msg.has_logs()) Add(log_requests_);
  if (msg.has_ack()) Add(acks_);
}

void FleetStats::Wrote(const v1::AgentMessage& msg) {
  if (!msg.has_batch()) return Add(messages_out_);
  Add(batches_out_);
  messages_out_.fetch_add(msg.batch().messages_size(), std::memory_order_relaxed);
}

void FleetStats::Registered() {
  Add(registrations_);
  absl::MutexLock lock(&mu_);
  ++registered_;
}

void FleetStats::Unregistered() {
  absl::MutexLock lock(&mu_);
  --registered_;
}

void FleetStats::StreamError(std::string what) {
  absl::MutexLock lock(&mu_);
  ++stream_errors_;
  last_error_ = std::move(what);
}

FleetCounters FleetStats::Snapshot() const {
  FleetCounters c;
  auto get = [](const Counter& x) { return x.load(std::memory_order_relaxed); };
  c.hosts = hosts_;
  c.registrations = get(registrations_);
  c.reconnects = get(reconnects_);
  c.launches = get(launches_);
  c.kills = get(kills_);
  c.log_requests = get(log_requests_);
  c.acks = get(acks_);
  c.running_sent = get(running_sent_);
  c.running_acked = get(running_acked_);
  c.succeeded_sent = get(succeeded_sent_);
  c.succeeded_acked = get(succeeded_acked_);
  c.killed_sent = get(killed_sent_);
  c.killed_acked = get(killed_acked_);
  c.messages_in = get(messages_in_);
  c.messages_out = get(messages_out_);
  c.batches_in = get(batches_in_);
  c.batches_out = get(batches_out_);
  absl::MutexLock lock(&mu_);
  c.registered = registered_;
  c.stream_errors = stream_errors_;
  c.last_error = last_error_;
  return c;
}

absl::Status FleetStats::WaitRegistered(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto all = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return registered_ >= hosts_; };
  if (mu_.AwaitWithTimeout(absl::Condition(&all), timeout)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat(registered_, " of ", hosts_, " emulated hosts registered after ",
                   absl::FormatDuration(timeout), "; stream errors: ", stream_errors_,
                   last_error_.empty() ? "" : absl::StrCat(", the last: ", last_error_)));
}

}  // namespace paceline::bench
