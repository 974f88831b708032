#include "api/event_hub.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace paceline::api {

std::vector<v1::WatchEvent> Watcher::Next(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]()
                   ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !queue_.empty() || !status_.ok(); };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  std::vector<v1::WatchEvent> out(std::make_move_iterator(queue_.begin()),
                                  std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

absl::Status Watcher::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void Watcher::Push(const v1::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  if (!status_.ok()) return;
  if (queue_.size() >= capacity_) {
    status_ = absl::ResourceExhaustedError(
        absl::StrCat("the watcher fell more than ", capacity_,
                     " events behind; read the state again, then watch again"));
    return;
  }
  queue_.push_back(event);
}

void Watcher::Close(absl::Status why) {
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = std::move(why);
}

std::shared_ptr<Watcher> EventHub::Subscribe(uint64_t job, size_t capacity) {
  auto w = std::make_shared<Watcher>(job, capacity);
  absl::MutexLock lock(&mu_);
  watchers_.push_back(w);
  watchers_count_.store(watchers_.size(), std::memory_order_relaxed);
  return w;
}

void EventHub::Unsubscribe(const Watcher* watcher) {
  absl::MutexLock lock(&mu_);
  std::erase_if(watchers_, [&](const auto& w) { return w.get() == watcher; });
  watchers_count_.store(watchers_.size(), std::memory_order_relaxed);
}

void EventHub::Publish(const std::vector<v1::WatchEvent>& events) {
  absl::MutexLock lock(&mu_);
  for (const auto& w : watchers_) {
    for (const v1::WatchEvent& e : events) {
      if (w->job() == 0 || w->job() == e.job_id()) w->Push(e);
    }
  }
}

void EventHub::CloseAll(const absl::Status& why) {
  absl::MutexLock lock(&mu_);
  for (const auto& w : watchers_) w->Close(why);
}

}  // namespace paceline::api
