#pragma once
// FleetStats: the counters of a fleet of emulated hosts (FakeAgent), whatever carries their
// messages. It is the FleetObserver the fleet's agents report to (it counts, then forwards to
// the benchmark's own observer, if any), and the transport tells it what it received, when a
// host registers or loses its connection, and about stream errors. Counters can be read at
// any time; WaitRegistered blocks until every host is registered.
//
// Thread-safety: every method is thread-safe. The forwarded-to observer is called on the
// threads that drive the agents.

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "bench/fake_agent.h"
#include "paceline/v1/host.pb.h"

namespace paceline::bench {

// A snapshot of a fleet's counters.
struct FleetCounters {
  int64_t hosts = 0;            // in the fleet
  int64_t registered = 0;       // hosts registered on their current connection, now
  int64_t registrations = 0;    // `registered` answers, over every connection
  int64_t reconnects = 0;       // connections opened after a host's first
  int64_t stream_errors = 0;    // connections that ended with an error (not by Stop)
  int64_t launches = 0;         // runs launched (duplicate launches not counted)
  int64_t kills = 0;            // kill commands received
  int64_t log_requests = 0;     // log requests received (each answered with an error)
  int64_t acks = 0;             // StatusAck messages received
  int64_t running_sent = 0;     // RUNNING updates (first sends)
  int64_t running_acked = 0;    // ... acknowledged by the master
  int64_t succeeded_sent = 0;   // SUCCEEDED updates (runs that finished)
  int64_t succeeded_acked = 0;  // ... acknowledged
  int64_t killed_sent = 0;      // KILLED updates
  int64_t killed_acked = 0;     // ... acknowledged
  int64_t messages_in = 0;      // MasterMessages received
  int64_t messages_out = 0;     // AgentMessages written (resends and heartbeats included)
  int64_t batches_in = 0;       // MasterMessage batches received (their messages counted above)
  int64_t batches_out = 0;      // AgentMessage batches written (ditto)
  std::string last_error;       // the last stream error, if any
};

class FleetStats final : public FleetObserver {
 public:
  // `forward`: not owned, may be null; must outlive this.
  FleetStats(int64_t hosts, FleetObserver* forward) : hosts_(hosts), forward_(forward) {}

  void OnLaunched(const RunId& run, absl::Time at) override;
  void OnSent(const RunId& run, FakeRunState state, absl::Time at) override;
  void OnAcked(const RunId& run, FakeRunState state, absl::Time at, absl::Time acked) override;

  // What the transport saw.
  void Received(const v1::MasterMessage& msg);
  void Wrote(const v1::AgentMessage& msg);
  void Registered();    // a host got `registered` on its connection
  void Unregistered();  // ... and that connection ended
  void Reconnected() { reconnects_.fetch_add(1, std::memory_order_relaxed); }
  void StreamError(std::string what);

  FleetCounters Snapshot() const;
  // OK once every host is registered at the same time; DEADLINE_EXCEEDED (with how many are,
  // and the last stream error) after `timeout`.
  absl::Status WaitRegistered(absl::Duration timeout);

 private:
  using Counter = std::atomic<int64_t>;
  static void Add(Counter& c) { c.fetch_add(1, std::memory_order_relaxed); }

  const int64_t hosts_;
  FleetObserver* const forward_;
  Counter registrations_{0}, reconnects_{0}, launches_{0}, kills_{0}, log_requests_{0}, acks_{0};
  Counter running_sent_{0}, running_acked_{0}, succeeded_sent_{0}, succeeded_acked_{0};
  Counter killed_sent_{0}, killed_acked_{0}, messages_in_{0}, messages_out_{0};
  Counter batches_in_{0}, batches_out_{0};
  mutable absl::Mutex mu_;
  int64_t registered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t stream_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::bench
