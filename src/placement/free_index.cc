#include "placement/free_index.h"

#include <bit>

#include "common/check.h"

namespace paceline::placement {

int FreeIndex::Level(int64_t v) {
  if (v <= 0) return 0;
  uint64_t u = static_cast<uint64_t>(v);
  int msb = 63 - std::countl_zero(u);
  int sub =
      msb >= 2 ? static_cast<int>((u >> (msb - 2)) & 3) : static_cast<int>((u << (2 - msb)) & 3);
  return 1 + msb * 4 + sub;
}

void FreeIndex::Place(uint32_t slot, int dim, int level, int64_t key) {
  Entry& e = entries_[slot];
  std::vector<uint32_t>& b = buckets_[dim][level];
  e.level[dim] = static_cast<uint8_t>(level);
  e.pos[dim] = static_cast<uint32_t>(b.size());
  b.push_back(slot);
  keys_[dim][level].push_back(key);
  if (level > max_level_[dim]) max_level_[dim] = level;
}

void FreeIndex::Remove(uint32_t slot, int dim) {
  Entry& e = entries_[slot];
  std::vector<uint32_t>& b = buckets_[dim][e.level[dim]];
  std::vector<int64_t>& k = keys_[dim][e.level[dim]];
  uint32_t pos = e.pos[dim];
  PL_CHECK(pos < b.size() && b[pos] == slot) << "free index corrupt at slot " << slot;
  uint32_t last = b.back();
  b[pos] = last;
  k[pos] = k.back();
  entries_[last].pos[dim] = pos;
  b.pop_back();
  k.pop_back();
  int& top = max_level_[dim];
  while (top > 0 && buckets_[dim][top].empty()) --top;
}

void FreeIndex::Insert(uint32_t slot, const Keys& keys) {
  if (slot >= entries_.size()) entries_.resize(slot + 1);
  Entry& e = entries_[slot];
  PL_CHECK(!e.present) << "slot " << slot << " indexed twice";
  e.present = true;
  for (int d = 0; d < kNumDims; ++d) Place(slot, d, Level(keys[d]), keys[d]);
  e.member_pos = static_cast<uint32_t>(members_.size());
  members_.push_back(slot);
}

void FreeIndex::Update(uint32_t slot, const Keys& keys) {
  PL_CHECK(Contains(slot)) << "slot " << slot << " not indexed";
  for (int d = 0; d < kNumDims; ++d) {
    int level = Level(keys[d]);
    if (level == entries_[slot].level[d]) {
      keys_[d][level][entries_[slot].pos[d]] = keys[d];
      continue;
    }
    Remove(slot, d);
    Place(slot, d, level, keys[d]);
  }
}

void FreeIndex::Erase(uint32_t slot) {
  PL_CHECK(Contains(slot)) << "slot " << slot << " not indexed";
  for (int d = 0; d < kNumDims; ++d) Remove(slot, d);
  Entry& e = entries_[slot];
  uint32_t last = members_.back();
  members_[e.member_pos] = last;
  entries_[last].member_pos = e.member_pos;
  members_.pop_back();
  e.present = false;
}

uint32_t FreeIndex::CountAtLeast(Dim d, int level) const {
  const auto& b = buckets_[static_cast<int>(d)];
  uint32_t n = 0;
  for (int l = level; l <= max_level_[static_cast<int>(d)]; ++l)
    n += static_cast<uint32_t>(b[l].size());
  return n;
}

}  // namespace paceline::placement
