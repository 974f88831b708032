#include "store/event_block.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/task_state.h"
#include "store/varint.h"

namespace paceline::store {
namespace {

constexpr char kBlockFormat = 0x01;

absl::Status Bad(JobId job, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("events of job ", job.ToString(), ": ", why));
}

}  // namespace

std::string EncodeEventBlock(const std::vector<const records::TaskEvent*>& events) {
  std::string out;
  out.reserve(2 + events.size() * 24);
  out.push_back(kBlockFormat);
  varint::Put(out, events.size());
  for (const records::TaskEvent* e : events) {
    varint::Put(out, e->run.task.instance);
    varint::Put(out, e->run.run);
    varint::Put(out, varint::ZigZag(absl::ToUnixMicros(e->at)));
    out.push_back(static_cast<char>(e->state));
    varint::PutString(out, e->host);
    varint::PutString(out, e->reason);
    varint::PutString(out, e->message);
  }
  return out;
}

absl::Status DecodeEventBlock(JobId job, absl::string_view block,
                              std::vector<records::TaskEvent>& out) {
  varint::Reader r(block);
  uint8_t format = 0;
  if (!r.Byte(format) || format != kBlockFormat) return Bad(job, "unknown block format");
  uint64_t count = 0;
  // Every event takes at least 7 bytes: a count beyond that is a corrupt block.
  if (!r.Varint(count) || count > block.size() / 7) return Bad(job, "bad event count");
  const size_t before = out.size();
  out.reserve(before + count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t instance = 0, run = 0, at = 0;
    uint8_t state = 0;
    records::TaskEvent e;
    if (!r.Varint(instance, 32) || !r.Varint(run, 32) || !r.Varint(at) || !r.Byte(state) ||
        !r.String(e.host) || !r.String(e.reason) || !r.String(e.message)) {
      out.resize(before);
      return Bad(job, absl::StrCat("event ", i, " of ", count, " is cut short or malformed"));
    }
    if (state >= kNumTaskStates) {
      out.resize(before);
      return Bad(job, absl::StrCat("event ", i, " has unknown state ", state));
    }
    e.run = RunId{TaskId{job, static_cast<uint32_t>(instance)}, static_cast<uint32_t>(run)};
    e.at = absl::FromUnixMicros(varint::UnZigZag(at));
    e.state = static_cast<TaskState>(state);
    out.push_back(std::move(e));
  }
  if (!r.done()) {
    out.resize(before);
    return Bad(job, "bytes after the last event");
  }
  return absl::OkStatus();
}

bool TakeNewestOfInstance(std::vector<records::TaskEvent>& block, uint32_t instance, size_t limit,
                          std::vector<records::TaskEvent>& newest_first) {
  auto full = [&] { return limit > 0 && newest_first.size() >= limit; };
  for (auto it = block.rbegin(); it != block.rend() && !full(); ++it) {
    if (it->run.task.instance == instance) newest_first.push_back(std::move(*it));
  }
  return !full();
}

void SortEventsByInstance(std::vector<records::TaskEvent>& events, size_t from) {
  std::stable_sort(events.begin() + static_cast<ptrdiff_t>(from), events.end(),
                   [](const records::TaskEvent& a, const records::TaskEvent& b) {
                     return a.run.task.instance < b.run.task.instance;
                   });
}

}  // namespace paceline::store
