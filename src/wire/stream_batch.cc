#include "wire/stream_batch.h"

#include "absl/strings/str_cat.h"

namespace paceline::wire {
namespace {

template <typename Msg, typename Alone>
absl::Status Check(const Msg& msg, absl::string_view alone_name, Alone alone) {
  if (!msg.has_batch()) return absl::OkStatus();
  for (int i = 0; i < msg.batch().messages_size(); ++i) {
    const Msg& m = msg.batch().messages(i);
    if (m.has_batch() || alone(m)) {
      return absl::InvalidArgumentError(absl::StrCat("batch.messages[", i,
                                                     "]: expected a message other than a batch or ",
                                                     alone_name, " (those come alone)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBatch(const v1::AgentMessage& msg) {
  return Check(msg, "register", [](const v1::AgentMessage& m) { return m.has_register_(); });
}

absl::Status CheckBatch(const v1::MasterMessage& msg) {
  return Check(msg, "registered", [](const v1::MasterMessage& m) { return m.has_registered(); });
}

}  // namespace paceline::wire
