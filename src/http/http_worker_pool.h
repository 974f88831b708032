#pragma once
// WorkerPool: the HTTP server's handler threads, with a bounded queue: TrySubmit refuses (false)
// when max_queued requests already wait. A handler that throws loses its answer, not the
// process.
//
// Thread-safety: TrySubmit and Stop from any thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace paceline::http {

class WorkerPool {
 public:
  WorkerPool(int threads, int max_queued);
  ~WorkerPool() { Stop(); }

  bool TrySubmit(std::function<void()> f);
  // Drops what waits, lets what runs finish, joins.
  void Stop();

 private:
  void Run();

  const int max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace paceline::http
