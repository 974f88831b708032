#pragma once
// Batches on an agent stream (AgentBatch and MasterBatch of proto/paceline/v1/host.proto): the
// messages queued for one stream while a write is in flight go as one stream message, so that
// a burst of launches or status updates costs one gRPC write and one read, not one per task.
//
//   // the writer, once the previous write is done and the peer accepts batches:
//   if (peer_accepts_batches) PackFront(queue);
//   Write(queue.front());
//   // the reader:
//   RETURN_IF_ERROR(CheckBatch(msg));
//   ForEachMessage(msg, [&](const auto& m) { Handle(m); });  // as if each came alone
//
// A batch holds at most kMaxBatchMessages messages and, past its first, kMaxBatchBytes bytes:
// well under gRPC's default 4 MiB message limit whatever the messages are.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "paceline/v1/host.pb.h"

namespace paceline::wire {

inline constexpr size_t kMaxBatchMessages = 256;
inline constexpr size_t kMaxBatchBytes = 1 << 20;

// Replaces the front of `queue` by one batch of the longest prefix that fits the limits, when
// that prefix has more than one message; otherwise leaves the queue as it is. `Msg` is
// v1::AgentMessage or v1::MasterMessage; no queued message may be a batch itself.
template <typename Msg>
void PackFront(std::deque<Msg>& queue) {
  if (queue.size() < 2) return;
  size_t n = 0, bytes = 0;
  for (const Msg& m : queue) {
    if (n == kMaxBatchMessages) break;
    bytes += m.ByteSizeLong();
    if (n > 0 && bytes > kMaxBatchBytes) break;
    ++n;
  }
  if (n < 2) return;
  Msg batch;
  auto* messages = batch.mutable_batch()->mutable_messages();
  messages->Reserve(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) messages->Add(std::move(queue[i]));
  queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
  queue.push_front(std::move(batch));
}

// Calls `f` on each message `msg` stands for, in order: those of its batch, or `msg` itself.
template <typename Msg, typename F>
void ForEachMessage(const Msg& msg, F&& f) {
  if (!msg.has_batch()) return f(msg);
  for (const Msg& m : msg.batch().messages()) f(m);
}

// INVALID_ARGUMENT naming the message when a batch holds a batch, or (from an agent) a
// `register`, which must come alone as the stream's first message; OK for anything that is not
// a batch.
absl::Status CheckBatch(const v1::AgentMessage& msg);
absl::Status CheckBatch(const v1::MasterMessage& msg);

}  // namespace paceline::wire
