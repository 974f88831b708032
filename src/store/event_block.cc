#include "store/event_block.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/task_state.h"

namespace paceline::store {
namespace {

constexpr char kFormat = 0x01;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutString(std::string& out, absl::string_view s) {
  PutVarint(out, s.size());
  out.append(s.data(), s.size());
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// Reads the block front to back; every read fails (and stays failed) past the end.
class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool Varint(uint64_t& v, int max_bits = 64) {
    v = 0;
    for (int shift = 0; shift < max_bits; shift += 7) {
      if (in_.empty()) return false;
      const auto byte = static_cast<uint8_t>(in_.front());
      in_.remove_prefix(1);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return max_bits >= 64 || (v >> max_bits) == 0;
    }
    return false;
  }
  bool Byte(uint8_t& b) {
    if (in_.empty()) return false;
    b = static_cast<uint8_t>(in_.front());
    in_.remove_prefix(1);
    return true;
  }
  bool String(std::string& s) {
    uint64_t n = 0;
    if (!Varint(n) || n > in_.size()) return false;
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  absl::string_view in_;
};

absl::Status Bad(JobId job, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("events of job ", job.ToString(), ": ", why));
}

}  // namespace

std::string EncodeEventBlock(const std::vector<const records::TaskEvent*>& events) {
  std::string out;
  out.reserve(2 + events.size() * 24);
  out.push_back(kFormat);
  PutVarint(out, events.size());
  for (const records::TaskEvent* e : events) {
    PutVarint(out, e->run.task.instance);
    PutVarint(out, e->run.run);
    PutVarint(out, ZigZag(absl::ToUnixMicros(e->at)));
    out.push_back(static_cast<char>(e->state));
    PutString(out, e->host);
    PutString(out, e->reason);
    PutString(out, e->message);
  }
  return out;
}

absl::Status DecodeEventBlock(JobId job, absl::string_view block,
                              std::vector<records::TaskEvent>& out) {
  Reader r(block);
  uint8_t format = 0;
  if (!r.Byte(format) || format != kFormat) return Bad(job, "unknown block format");
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
    e.at = absl::FromUnixMicros(UnZigZag(at));
    e.state = static_cast<TaskState>(state);
    out.push_back(std::move(e));
  }
  if (!r.done()) {
    out.resize(before);
    return Bad(job, "bytes after the last event");
  }
  return absl::OkStatus();
}

}  // namespace paceline::store
