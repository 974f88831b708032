// Fuzzes the decoder of event blocks (store/event_block.h): any input decodes or gets a clear
// DATA_LOSS, never a crash; what decodes encodes to a block that decodes to the same events.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/strings/string_view.h"
#include "store/event_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using paceline::JobId;
  using paceline::records::TaskEvent;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<TaskEvent> events;
  absl::Status s = paceline::store::DecodeEventBlock(JobId(7), input, events);
  if (!s.ok()) {
    if (!absl::IsDataLoss(s) || s.message().empty() || !events.empty()) std::abort();
    return 0;
  }
  std::vector<const TaskEvent*> pointers;
  for (const TaskEvent& e : events) pointers.push_back(&e);
  std::vector<TaskEvent> again;
  if (!paceline::store::DecodeEventBlock(JobId(7), paceline::store::EncodeEventBlock(pointers),
                                         again)
           .ok() ||
      again != events) {
    std::abort();
  }
  return 0;
}
