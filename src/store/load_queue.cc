#include "store/load_queue.h"

#include <utility>

namespace paceline::store {

void LoadQueue::Head(records::StoreContents contents) {
  absl::MutexLock lock(&mu_);
  head_ = std::move(contents);
  head_given_ = true;
}

bool LoadQueue::Tasks(std::vector<records::TaskRecord> batch) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](LoadQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
        return q->cancelled_ || q->batches_.size() < q->capacity_;
      },
      this));
  if (cancelled_) return false;
  batches_.push_back(std::move(batch));
  return true;
}

std::vector<records::TaskRecord> LoadQueue::TakeSpare() {
  absl::MutexLock lock(&mu_);
  if (spares_.empty()) return {};
  std::vector<records::TaskRecord> spare = std::move(spares_.back());
  spares_.pop_back();
  return spare;
}

void LoadQueue::Recycle(std::vector<records::TaskRecord> batch) {
  batch.clear();  // outside the lock: it frees what the records own
  absl::MutexLock lock(&mu_);
  if (!cancelled_ && spares_.size() < capacity_ + 2) spares_.push_back(std::move(batch));
}

void LoadQueue::Close(absl::Status loaded) {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  loaded_ = std::move(loaded);
}

std::optional<records::StoreContents> LoadQueue::WaitHead() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](LoadQueue* q)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) { return q->head_given_ || q->closed_; },
      this));
  if (!head_) return std::nullopt;
  std::optional<records::StoreContents> head = std::move(head_);
  head_.reset();
  return head;
}

std::optional<std::vector<records::TaskRecord>> LoadQueue::Next() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](LoadQueue* q)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) { return !q->batches_.empty() || q->closed_; },
      this));
  if (batches_.empty()) return std::nullopt;
  std::vector<records::TaskRecord> batch = std::move(batches_.front());
  batches_.pop_front();
  return batch;
}

void LoadQueue::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  batches_.clear();
  spares_.clear();
}

absl::Status LoadQueue::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&closed_));
  return loaded_;
}

}  // namespace paceline::store
