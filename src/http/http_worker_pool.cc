#include "http/http_worker_pool.h"

#include <exception>

namespace paceline::http {

WorkerPool::WorkerPool(int threads, int max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

bool WorkerPool::TrySubmit(std::function<void()> f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || static_cast<int>(queue_.size()) >= max_queued_) return false;
  queue_.push_back(std::move(f));
  cv_.notify_one();
  return true;
}

void WorkerPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> f;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      f = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      f();
    } catch (const std::exception&) {
      // A handler that throws loses its answer (the connection closes), not the process.
    }
  }
}

}  // namespace paceline::http
