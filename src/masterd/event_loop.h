#pragma once
// EventLoop: the master's one thread that owns the mutable cluster state. Other threads (gRPC
// handlers, agent sessions, the store's writer) Post() closures to it; the loop runs them one
// at a time, in order, and calls `on_tick` every `tick` (the scheduling cycle). A turn of the
// loop runs everything queued since the last one, then the tick when due, then `on_turn_end`
// (the master commits the turn's changes as one batch there). Because only
// this thread touches the scheduler core, the core needs no locks and cannot race.
//
// Call(fn) posts and waits for the result: for API handlers that need an answer.
// Read(fn) does the same for a closure that only reads, and jumps the queue: it runs before the
// next queued closure (between two closures of a turn, or before the turn's first), so a read
// waits for at most one closure or one tick, never for a turn's whole backlog. It sees what the
// closures before it changed, as Call does, durable or not yet.
//
// Thread-safety: Post/Call/Stop are thread-safe; closures run on the loop thread. Calling
// Call() from the loop thread itself would deadlock (checked).

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace paceline::masterd {

class EventLoop {
 public:
  EventLoop(absl::Duration tick, std::function<void()> on_tick,
            std::function<void()> on_turn_end = nullptr);
  ~EventLoop();  // Stop()s

  void Start();
  // Runs what is queued, then stops the thread. Idempotent.
  void Stop();
  void Post(std::function<void()> fn);
  // Asks for an early tick (e.g. new work arrived) without waiting for the period.
  void Kick();

  template <typename T>
  T Call(const std::function<T()>& fn) {
    AbortIfInLoopThread("Call");
    T result{};
    absl::Notification done;
    Post([&] {
      result = fn();
      done.Notify();
    });
    done.WaitForNotification();
    return result;
  }

  void Read(const std::function<void()>& fn);
  // A Read is waiting for the loop (for tests).
  bool ReadWaiting() const { return reads_waiting_.load(std::memory_order_acquire); }

  bool InLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Call and Read from the loop thread would wait for themselves: a failed check (PL_CHECK).
  void AbortIfInLoopThread(const char* what) const;

 private:
  void Run();
  void RunReads();  // on the loop thread: the reads queued so far

  const absl::Duration tick_;
  const std::function<void()> on_tick_;
  const std::function<void()> on_turn_end_;
  absl::Mutex mu_;
  std::vector<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> reads_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> reads_waiting_{false};  // !reads_.empty(), read between closures without mu_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool kicked_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace paceline::masterd
