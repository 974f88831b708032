#pragma once
// LoadQueue: a LoadSink (store.h) that another thread consumes while the load goes on: the
// head first, then the task batches, the loader waiting when it is `capacity` batches ahead.
// A master's start reads the store on the writer thread and rebuilds on its own meanwhile.
//
//   LoadQueue q(8);
//   loader thread:  q.Close(store.LoadInto(q));
//   reader thread:  std::optional<records::StoreContents> head = q.WaitHead();
//                   // nullopt: the load ended before its head; Wait() says why
//                   while (std::optional<std::vector<records::TaskRecord>> b = q.Next()) {
//                     ...; q.Recycle(*std::move(b));  // optional: the loader refills it
//                   }
//                   absl::Status loaded = q.Wait();  // the load's result, once it closed
//
// A reader that stops early calls Cancel(): the loader's next Tasks() answers false, the
// batches waiting are dropped. The reader must Wait() before the queue goes away.
//
// Thread-safety: thread-safe; one loader (which may hand batches over from two threads) and
// one reader.

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "records/records.h"
#include "store/store.h"

namespace paceline::store {

class LoadQueue final : public LoadSink {
 public:
  explicit LoadQueue(size_t capacity) : capacity_(capacity) {}

  // LoadSink, for the loader.
  void Head(records::StoreContents contents) override;
  bool Tasks(std::vector<records::TaskRecord> batch) override;
  std::vector<records::TaskRecord> TakeSpare() override;
  // The loader is done (with the load's result); Next() drains what is left, then ends.
  void Close(absl::Status loaded);

  // For the reader.
  std::optional<records::StoreContents> WaitHead();
  std::optional<std::vector<records::TaskRecord>> Next();
  // A batch Next() gave, done with: emptied and kept (up to capacity + 2) for TakeSpare().
  void Recycle(std::vector<records::TaskRecord> batch);
  void Cancel();
  absl::Status Wait();

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  std::optional<records::StoreContents> head_ ABSL_GUARDED_BY(mu_);
  bool head_given_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::vector<records::TaskRecord>> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<records::TaskRecord>> spares_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status loaded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::store
