#pragma once
// FakeAgent: one emulated host agent, as the master sees it through the agent protocol
// (AgentService.Connect in proto/paceline/v1/host.proto), with no transport, no threads and no
// clock of its own. A transport — GrpcAgentFleet (grpc_agent_fleet.h) over real gRPC streams,
// or an in-process one — hands it what the master sends and the time, and writes what it
// returns, in order:
//
//   FakeAgent agent(spec, options);
//   write(agent.Register());                       // first message of every connection
//   on each MasterMessage m:   write(agent.OnMessage(m, now));
//   once now >= NextDue():     write(agent.Due(now));
//   when the connection ends:  agent.Disconnected();   then Register() again to reconnect
//
// What the emulated host does:
//   registered  heartbeats every interval it asks for; every unacknowledged update is sent
//               again (it is a new connection: the previous one may have lost them)
//   launch      RUNNING at once; SUCCEEDED after options.task_duration (default: never)
//   kill        KILLED at once (no grace period: the emulated process exits on SIGTERM)
//   logs        a LogResponse with the error "emulated host has no logs"
//   ack N       forgets every update with seq <= N
//   batch       each of its messages in order (OnMessage's answers to them, concatenated)
// Status updates carry a per-agent increasing seq and are kept until acknowledged; one not
// acknowledged within options.resend_after is sent again (the master ignores duplicates).
// Launches of a run the host already has, and kills of a run it does not have, are ignored,
// as the real agent does.
//
// Memory: about 300 bytes per host with its spec (labels and long names add their strings),
// 40 bytes per live run and 64 per unacknowledged update; no strings per run (except the ports
// of runs launched with ports, which a re-registration must report). 50,000 agents with 20
// runs each take about 60 MB.
//
// Thread-safety: none; one thread at a time per agent. FakeAgentOptions is shared, read-only,
// by many agents; its observer is called on whichever thread drives an agent, so it must be
// thread-safe when agents run on several threads.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/defaults.h"
#include "common/ids.h"
#include "paceline/v1/host.pb.h"

namespace paceline::bench {

// The updates an emulated host sends about a run.
enum class FakeRunState : uint8_t { kRunning, kSucceeded, kKilled };
absl::string_view FakeRunStateName(FakeRunState s);  // "RUNNING", "SUCCEEDED", "KILLED"

// What a benchmark learns from emulated hosts, per run: when each update happened (= was first
// handed to the transport, if connected) and when the master acknowledged it, i.e. had made it
// durable. OnAcked(kRunning) minus the submit time is the submit -> running latency as the
// master commits it; OnSent(kRunning) minus the submit time is the same as the host sees it.
// Called synchronously from FakeAgent's methods: keep it cheap.
class FleetObserver {
 public:
  virtual ~FleetObserver() = default;
  // A launch of `run` arrived (duplicates are not reported).
  virtual void OnLaunched(const RunId& /*run*/, absl::Time /*at*/) {}
  // The update `state` of `run` happened at `at`; resends are not reported.
  virtual void OnSent(const RunId& /*run*/, FakeRunState /*state*/, absl::Time /*at*/) {}
  // The first acknowledgement covering that update arrived at `acked`; `at` as in OnSent.
  virtual void OnAcked(const RunId& /*run*/, FakeRunState /*state*/, absl::Time /*at*/,
                       absl::Time /*acked*/) {}
};

// The behaviour shared by every host of a fleet.
struct FakeAgentOptions {
  // A launched run reports SUCCEEDED this long after its RUNNING; infinite: runs until killed.
  absl::Duration task_duration = absl::InfiniteDuration();
  // An update not acknowledged this long after it was sent is sent again.
  absl::Duration resend_after = absl::Seconds(10);
  std::string isolation = "none (emulated)";  // what `host list` shows
  // Whether the host reads the master's batches (AgentRegister.accepts_batches) and its
  // transport writes them once the master reads them; false emulates an agent older than
  // batches.
  bool batches = true;
  FleetObserver* observer = nullptr;  // not owned; may be null
};

// One host. capacity.gpu_milli / 1000 whole devices are offered, each as gpu model `gpu_model`.
struct FakeHostSpec {
  std::string name;
  v1::Resources capacity;
  std::vector<std::pair<std::string, std::string>> labels;
  uint32_t port_first = 31000;
  uint32_t port_last = 31999;
  std::string gpu_model = "emulated";
  // Devices it reports unhealthy (AgentRegister.gpu_faults), with an emulated XID 79.
  std::vector<uint32_t> unhealthy_gpus;
};

class FakeAgent {
 public:
  FakeAgent(FakeHostSpec spec, std::shared_ptr<const FakeAgentOptions> options);
  FakeAgent(FakeAgent&&) = default;
  FakeAgent& operator=(FakeAgent&&) = default;

  const std::string& name() const { return spec_.name; }

  // The first message of a new connection: the host, its capacity, labels and ports, and the
  // runs it has (live ones, and ended ones whose final update is not acknowledged yet). Until
  // the master answers `registered`, Due() sends nothing.
  v1::AgentMessage Register();
  // What to send in answer to `msg`, received at `now` (often nothing).
  std::vector<v1::AgentMessage> OnMessage(const v1::MasterMessage& msg, absl::Time now);
  // What is due by `now`: heartbeats, runs that finish, updates to send again. Cheap (no
  // allocation) when now < NextDue().
  std::vector<v1::AgentMessage> Due(absl::Time now);
  // When Due() next has something to send (InfiniteFuture when nothing is scheduled).
  absl::Time NextDue() const { return next_due_; }
  // The connection ended: nothing is sent until the next Register() is answered.
  void Disconnected();

  bool registered() const { return registered_; }
  bool batches() const { return options_->batches; }
  size_t live_runs() const { return runs_.size(); }
  size_t unacknowledged() const { return outbox_.size(); }
  // The heap memory this agent holds (its run and update records), for a benchmark that must
  // tell its own memory from the master's in one process.
  size_t HeapBytes() const;
  uint64_t last_seq() const { return next_seq_ - 1; }

 private:
  // What a run holds on the host, reported again on re-registration. Only for runs with ports
  // or GPU devices.
  struct Held {
    std::vector<std::pair<std::string, uint32_t>> ports;
    std::vector<uint32_t> gpu_devices;
  };
  struct Run {
    RunId id;
    absl::Time finish_at;
    std::unique_ptr<Held> held;
  };
  struct Update {
    uint64_t seq;
    RunId run;
    FakeRunState state;
    absl::Time at;         // when it happened (first sent, if connected)
    absl::Time last_sent;  // InfinitePast: never sent
  };

  std::vector<v1::AgentMessage> Launch(const v1::LaunchTask& launch, absl::Time now);
  std::vector<v1::AgentMessage> Kill(const RunId& run, absl::Time now);
  void Ack(uint64_t seq, absl::Time now);
  // Queues an update and sends it now if connected.
  void Report(const RunId& run, FakeRunState state, absl::Time now,
              std::vector<v1::AgentMessage>& out);
  v1::AgentMessage ToMessage(const Update& u) const;
  void RecomputeNextDue();

  FakeHostSpec spec_;
  std::shared_ptr<const FakeAgentOptions> options_;
  bool registered_ = false;
  absl::Duration heartbeat_interval_ = defaults::kHeartbeatInterval;
  absl::Time next_heartbeat_ = absl::InfiniteFuture();
  absl::Time next_due_ = absl::InfiniteFuture();
  uint64_t next_seq_ = 1;
  std::vector<Run> runs_;       // live runs, in launch order
  std::vector<Update> outbox_;  // unacknowledged updates, by seq
};

}  // namespace paceline::bench
