// Fuzzes the decoder of task rows (store/task_row.h): any input decodes or gets a clear
// DATA_LOSS, never a crash; what decodes encodes to a row that decodes to the same task.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "store/task_row.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using paceline::JobId;
  using paceline::TaskId;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const TaskId id{JobId(7), 3};
  paceline::records::TaskRecord task;
  absl::Status s = paceline::store::DecodeTaskRow(id, input, task);
  if (!s.ok()) {
    if (!absl::IsDataLoss(s) || s.message().empty()) std::abort();
    return 0;
  }
  paceline::records::TaskRecord again;
  if (task.id != id ||
      !paceline::store::DecodeTaskRow(id, paceline::store::EncodeTaskRow(task), again).ok() ||
      again != task) {
    std::abort();
  }
  return 0;
}
