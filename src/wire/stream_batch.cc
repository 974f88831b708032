#include "wire/stream_batch.h"

#include "absl/strings/str_cat.h"

namespace paceline::wire {
namespace {

// `misplaced(m)`: why `m` may not be in a batch, or "" if it may.
template <typename Msg, typename Misplaced>
absl::Status Check(const Msg& msg, Misplaced misplaced) {
  if (!msg.has_batch()) return absl::OkStatus();
  for (int i = 0; i < msg.batch().messages_size(); ++i) {
    const Msg& m = msg.batch().messages(i);
    absl::string_view why = m.has_batch() ? "a batch is never nested" : misplaced(m);
    if (!why.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("batch.messages[", i, "]: ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBatch(const v1::AgentMessage& msg) {
  return Check(msg, [](const v1::AgentMessage& m) -> absl::string_view {
    return m.has_register_() ? "register comes alone, as the stream's first message" : "";
  });
}

absl::Status CheckBatch(const v1::MasterMessage& msg) {
  // `registered` may be in a batch: the launches of a cycle that placed tasks on a host as it
  // registered can be queued before it.
  return Check(msg, [](const v1::MasterMessage&) -> absl::string_view { return ""; });
}

}  // namespace paceline::wire
