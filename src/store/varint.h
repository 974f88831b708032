#pragma once
// The little-endian base-128 varints and length-prefixed strings of the store's binary rows
// (event_block.h, task_row.h): writers that append to a string, and a Reader that takes them
// back front to back, refusing what is cut short or too wide.
//
// Thread-safety: pure functions; a Reader belongs to one thread.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace paceline::store::varint {

inline void Put(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void PutString(std::string& out, absl::string_view s) {
  Put(out, s.size());
  out.append(s.data(), s.size());
}

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Every read answers false past the end (and on a value wider than `max_bits`); after a false
// the reader's position is unspecified and the input is to be refused.
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
  size_t left() const { return in_.size(); }

 private:
  absl::string_view in_;
};

}  // namespace paceline::store::varint
