#pragma once
// HostStream: one FakeAgent on one AgentService.Connect stream to the master, over gRPC's
// asynchronous client API. GrpcAgentFleet (grpc_agent_fleet.h) owns the completion queue and
// the thread that drives it: it passes each completion of this stream's operations to
// OnEvent, and calls Tick every few milliseconds for the timers (reconnecting, and what the
// agent has due: heartbeats, finished runs, resends).
//
// One connection (each arrow but Tick's is a completion on the queue):
//
//   idle --Tick, backoff over--> starting --start ok--> open: write register, then one read
//    ^                             | start failed          |   and at most one write in flight
//    |                             v                       | read or write failed, or Cancel()
//    +-- torn down, backoff <-- finishing <----------------+  (TryCancel if Cancel(); Finish
//        (no operation pending)                               once the read is back)
//
// What queues behind a write goes as one batch (wire/stream_batch.h) once the master said it
// reads them. Messages the agent produces while the stream is not open are dropped: updates stay in
// the agent's outbox until acknowledged and go again after the next registration.
//
// Thread-safety: every method runs on the thread of the stream's completion queue. The stub
// is thread-safe and shared; FleetStats is thread-safe.

#include <deque>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "bench/fake_agent.h"
#include "bench/fleet_stats.h"
#include "paceline/v1/host.grpc.pb.h"

namespace paceline::bench {

struct HostStreamOptions {
  std::string token;  // sent as "authorization: Bearer <token>"; empty: none
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
};

class HostStream {
 public:
  enum class Op : uint8_t { kStart, kRead, kWrite, kFinish };
  // What is passed to the completion queue as the tag of an operation.
  struct Tag {
    HostStream* stream;
    Op op;
  };

  // Pointers are not owned and must outlive this.
  HostStream(FakeAgent agent, v1::AgentService::Stub* stub, grpc::CompletionQueue* cq,
             const HostStreamOptions* options, FleetStats* stats);
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  // The completion of one of this stream's operations (tag->stream == this).
  void OnEvent(Op op, bool ok, absl::Time now);
  // Connects when idle and the backoff is over; sends what the agent has due.
  void Tick(absl::Time now);
  // Ends the connection and never connects again.
  void Cancel();
  // No call and no operation in flight (after Cancel: stopped for good).
  bool idle() const { return phase_ == Phase::kIdle; }
  const FakeAgent& agent() const { return agent_; }

 private:
  enum class Phase : uint8_t { kIdle, kStarting, kOpen, kFinishing };

  void Connect(absl::Time now);
  void Send(std::vector<v1::AgentMessage> msgs);
  void MaybeWrite();
  void Read();
  // Ends the call: `cancel` also cancels it (Cancel()). A failed start, read or write means
  // the call is over already: no cancel, so that Finish reports the server's status.
  void Fail(bool cancel);
  void MaybeFinish();
  void TearDown(absl::Time now);

  FakeAgent agent_;
  v1::AgentService::Stub* const stub_;
  grpc::CompletionQueue* const cq_;
  const HostStreamOptions* const options_;
  FleetStats* const stats_;

  Phase phase_ = Phase::kIdle;
  bool stopping_ = false;
  bool connected_once_ = false;
  bool registered_ = false;
  bool master_batches_ = false;  // the master reads our batches (its `registered` said so)
  bool reading_ = false;
  bool writing_ = false;
  bool finish_called_ = false;
  bool cancelled_ = false;
  int pending_ = 0;  // operations in flight on the queue
  absl::Time reconnect_at_ = absl::InfinitePast();
  absl::Duration backoff_;

  std::unique_ptr<grpc::ClientContext> ctx_;
  std::unique_ptr<grpc::ClientAsyncReaderWriter<v1::AgentMessage, v1::MasterMessage>> call_;
  v1::MasterMessage in_;
  std::deque<v1::AgentMessage> out_;  // front: being written
  grpc::Status status_;
  Tag start_tag_{this, Op::kStart}, read_tag_{this, Op::kRead}, write_tag_{this, Op::kWrite},
      finish_tag_{this, Op::kFinish};
};

}  // namespace paceline::bench
