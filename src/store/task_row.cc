#include "store/task_row.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/task_state.h"
#include "store/bad_row.h"
#include "store/varint.h"

namespace paceline::store {
namespace {

constexpr char kRowFormat = 0x01;
enum Flag : uint8_t {
  kStarted = 1,
  kFinished = 2,
  kNotBefore = 4,
  kRestartRequested = 8,
  kGangAttempt = 16,
  kChecks = 32,
  kPorts = 64,
  kAllFlags = 127,
};

bool IsSet(absl::Time t) { return t != absl::InfinitePast(); }

void PutTime(std::string& out, absl::Time t) {
  if (IsSet(t)) varint::Put(out, varint::ZigZag(absl::ToUnixMicros(t)));
}

bool ReadTime(varint::Reader& r, bool present, absl::Time& t) {
  t = absl::InfinitePast();
  if (!present) return true;
  uint64_t v = 0;
  if (!r.Varint(v)) return false;
  t = absl::FromUnixMicros(varint::UnZigZag(v));
  return true;
}

bool ReadInt32(varint::Reader& r, int32_t& out) {
  uint64_t v = 0;
  if (!r.Varint(v, 32)) return false;
  out = static_cast<int32_t>(varint::UnZigZag(v));
  return true;
}

}  // namespace

std::string EncodeTaskRow(const records::TaskRecord& t) {
  std::string out;
  out.reserve(24 + t.host.size() + t.reason.size() + t.message.size() + t.volume_host.size());
  const bool checks = !t.health.empty() || !t.readiness.empty();
  out.push_back(kRowFormat);
  out.push_back(static_cast<char>(
      (IsSet(t.started_at) ? kStarted : 0) | (IsSet(t.finished_at) ? kFinished : 0) |
      (IsSet(t.not_before) ? kNotBefore : 0) | (t.restart_requested ? kRestartRequested : 0) |
      (t.gang_attempt != 0 ? kGangAttempt : 0) | (checks ? kChecks : 0) |
      (t.ports.empty() ? 0 : kPorts)));
  varint::Put(out, t.run);
  out.push_back(static_cast<char>(t.state));
  varint::PutString(out, t.host);
  PutTime(out, t.started_at);
  PutTime(out, t.finished_at);
  varint::Put(out, varint::ZigZag(t.exit_code));
  varint::Put(out, varint::ZigZag(t.signal));
  varint::PutString(out, t.reason);
  varint::PutString(out, t.message);
  varint::Put(out, t.failures);
  PutTime(out, t.not_before);
  varint::Put(out, t.spec_version);
  varint::Put(out, t.next_spec_version);
  varint::PutString(out, t.volume_host);
  if (t.gang_attempt != 0) varint::Put(out, t.gang_attempt);
  if (checks) {
    varint::PutString(out, t.health);
    varint::PutString(out, t.readiness);
  }
  if (!t.ports.empty()) {
    varint::Put(out, t.ports.size());
    for (uint16_t p : t.ports) varint::Put(out, p);
  }
  return out;
}

absl::Status DecodeTaskRow(TaskId id, absl::string_view row, records::TaskRecord& out) {
  auto bad = [&](absl::string_view why) { return BadRow("tasks", id.ToString(), why); };
  varint::Reader r(row);
  uint8_t format = 0, flags = 0, state = 0;
  if (!r.Byte(format) || format != kRowFormat) return bad("unknown row format");
  if (!r.Byte(flags) || (flags & ~kAllFlags) != 0) return bad("unknown flags");
  out.id = id;
  uint64_t run = 0, failures = 0, gang_attempt = 0;
  if (!r.Varint(run, 32) || !r.Byte(state) || !r.String(out.host) ||
      !ReadTime(r, flags & kStarted, out.started_at) ||
      !ReadTime(r, flags & kFinished, out.finished_at) || !ReadInt32(r, out.exit_code) ||
      !ReadInt32(r, out.signal) || !r.String(out.reason) || !r.String(out.message) ||
      !r.Varint(failures, 32) || !ReadTime(r, flags & kNotBefore, out.not_before) ||
      !r.Varint(out.spec_version) || !r.Varint(out.next_spec_version) ||
      !r.String(out.volume_host) || ((flags & kGangAttempt) != 0 && !r.Varint(gang_attempt, 32))) {
    return bad("cut short or malformed");
  }
  out.health.clear();
  out.readiness.clear();
  if ((flags & kChecks) != 0 && (!r.String(out.health) || !r.String(out.readiness))) {
    return bad("cut short or malformed checks");
  }
  out.ports.clear();
  if ((flags & kPorts) != 0) {
    uint64_t count = 0;
    if (!r.Varint(count, 16)) return bad("cut short or malformed ports");
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t port = 0;
      if (!r.Varint(port, 16)) return bad("cut short or malformed ports");
      out.ports.push_back(static_cast<uint16_t>(port));
    }
  }
  if (state >= kNumTaskStates) return bad(absl::StrCat("unknown state ", state));
  if (!r.done()) return bad("bytes after the last field");
  out.run = static_cast<uint32_t>(run);
  out.state = static_cast<TaskState>(state);
  out.failures = static_cast<uint32_t>(failures);
  out.restart_requested = (flags & kRestartRequested) != 0;
  out.gang_attempt = static_cast<uint32_t>(gang_attempt);
  return absl::OkStatus();
}

}  // namespace paceline::store
