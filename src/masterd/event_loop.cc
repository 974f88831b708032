#include "masterd/event_loop.h"

#include <pthread.h>

#include "absl/time/clock.h"
#include "common/check.h"

namespace paceline::masterd {

EventLoop::EventLoop(absl::Duration tick, std::function<void()> on_tick,
                     std::function<void()> on_turn_end)
    : tick_(tick), on_tick_(std::move(on_tick)), on_turn_end_(std::move(on_turn_end)) {}

EventLoop::~EventLoop() { Stop(); }

void EventLoop::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "pl-loop");  // in top, perf, /proc
    Run();
  });
}

void EventLoop::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void EventLoop::Post(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(fn));
}

void EventLoop::AbortIfInLoopThread(const char* what) const {
  PL_CHECK(!InLoopThread()) << "EventLoop::" << what
                            << " on the loop's own thread would wait for itself forever";
}

void EventLoop::Read(const std::function<void()>& fn) {
  AbortIfInLoopThread("Read");
  absl::Notification done;
  {
    absl::MutexLock lock(&mu_);
    reads_.push_back([&] {
      fn();
      done.Notify();
    });
    reads_waiting_.store(true, std::memory_order_release);
  }
  done.WaitForNotification();
}

void EventLoop::RunReads() {
  std::vector<std::function<void()>> reads;
  {
    absl::MutexLock lock(&mu_);
    reads.swap(reads_);
    reads_waiting_.store(false, std::memory_order_relaxed);
  }
  for (auto& fn : reads) fn();
}

void EventLoop::Kick() {
  absl::MutexLock lock(&mu_);
  kicked_ = true;
}

void EventLoop::Run() {
  absl::Time next_tick = absl::Now() + tick_;
  while (true) {
    std::vector<std::function<void()>> batch;
    bool tick = false;
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || kicked_ || !queue_.empty() || !reads_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), next_tick);
      batch.swap(queue_);
      stop = stopping_;
      tick = kicked_ || absl::Now() >= next_tick;
      kicked_ = false;
    }
    for (auto& fn : batch) {
      if (reads_waiting_.load(std::memory_order_acquire)) RunReads();
      fn();
    }
    if (reads_waiting_.load(std::memory_order_acquire)) RunReads();
    if (tick && !stop) {
      on_tick_();
      next_tick = absl::Now() + tick_;
    }
    if (on_turn_end_) on_turn_end_();
    if (stop) {
      RunReads();
      // Drain what the last closures posted, then leave.
      absl::MutexLock lock(&mu_);
      if (queue_.empty() && reads_.empty()) return;
    }
  }
}

}  // namespace paceline::masterd
