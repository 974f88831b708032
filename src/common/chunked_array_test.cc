#include "common/chunked_array.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace paceline {
namespace {

struct Record {  // the size of a gang record in the resource manager
  uint64_t id = 0;
  std::array<char, 232> rest{};
};

TEST(ChunkedArray, GrowingNeverMovesWhatItHolds) {
  ChunkedArray<Record> a;
  a.emplace_back().id = 7;
  const Record* first = &a[0];
  for (uint64_t i = 1; i < 20'000; ++i) a.emplace_back().id = i;  // about 18 chunks
  EXPECT_EQ(&a[0], first);
  EXPECT_EQ(a[0].id, 7u);
  ASSERT_EQ(a.size(), 20'000u);
  for (uint64_t i = 1; i < a.size(); ++i) ASSERT_EQ(a[i].id, i);
  ChunkedArray<Record> copy = a;  // a deep copy, as the placement snapshot's copies need
  copy[0].id = 8;
  EXPECT_EQ(a[0].id, 7u);
  EXPECT_EQ(copy.size(), a.size());
}

}  // namespace
}  // namespace paceline
