#include "store/store.h"

#include <utility>

#include "common/status.h"

namespace paceline::store {

absl::Status LoadAbandoned() {
  return absl::CancelledError("the store's load was abandoned by its reader");
}

absl::Status Store::SendCommit(const std::vector<const records::WriteBatch*>& batches) {
  (void)batches;
  return absl::UnimplementedError(Describe() + " has no pipelined commits");
}

absl::Status Store::FinishCommit() {
  return absl::UnimplementedError(Describe() + " has no pipelined commits");
}

absl::Status Store::LoadInto(LoadSink& sink) {
  ASSIGN_OR_RETURN(records::StoreContents contents, Load());
  std::vector<records::TaskRecord> tasks = std::exchange(contents.tasks, {});
  sink.Head(std::move(contents));
  if (!tasks.empty() && !sink.Tasks(std::move(tasks))) return LoadAbandoned();
  return absl::OkStatus();
}

}  // namespace paceline::store
