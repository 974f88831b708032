#include "placement/free_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace paceline::placement {
namespace {

TEST(FreeIndex, LevelIsMonotoneAndFine) {
  EXPECT_EQ(FreeIndex::Level(0), 0);
  EXPECT_EQ(FreeIndex::Level(-5), 0);
  EXPECT_EQ(FreeIndex::Level(1), 1);
  EXPECT_LT(FreeIndex::Level(int64_t{1} << 62), FreeIndex::kLevels);
  std::mt19937_64 rng(42);
  SCOPED_TRACE("seed 42");
  for (int i = 0; i < 10000; ++i) {
    int64_t a = static_cast<int64_t>(rng() >> (rng() % 63 + 1));
    int64_t b = a + static_cast<int64_t>(rng() % 1000);
    ASSERT_LE(FreeIndex::Level(a), FreeIndex::Level(b)) << a << " " << b;
  }
  // Four levels per power of two: 1100 and 1200 share a bucket, 1300 is in the next one.
  EXPECT_EQ(FreeIndex::Level(1100), FreeIndex::Level(1200));
  EXPECT_LT(FreeIndex::Level(1100), FreeIndex::Level(1300));
}

TEST(FreeIndex, InsertUpdateEraseKeepBucketsConsistent) {
  FreeIndex idx;
  idx.Insert(0, {1000, 4000, 0, 0});
  idx.Insert(5, {8000, 4000, 0, 1000});
  idx.Insert(2, {2000, 100, 0, 0});
  EXPECT_EQ(idx.size(), 3u);
  EXPECT_EQ(idx.CountAtLeast(Dim::kCpu, FreeIndex::Level(2000)), 2u);
  EXPECT_EQ(idx.CountAtLeast(Dim::kGpu, FreeIndex::Level(500)), 1u);
  EXPECT_EQ(idx.MaxLevel(Dim::kCpu), FreeIndex::Level(8000));
  idx.Update(5, {0, 0, 0, 0});
  EXPECT_EQ(idx.MaxLevel(Dim::kCpu), FreeIndex::Level(2000));
  EXPECT_EQ(idx.Bucket(Dim::kCpu, 0).size(), 1u);
  idx.Erase(0);
  EXPECT_FALSE(idx.Contains(0));
  EXPECT_TRUE(idx.Contains(2));
  EXPECT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx.CountAtLeast(Dim::kCpu, 0), 2u);
  idx.Insert(0, {1, 1, 1, 1});
  EXPECT_EQ(idx.size(), 3u);
}

TEST(FreeIndex, BucketsKeepTheExactKeysOfTheirHosts) {
  FreeIndex idx;
  idx.Insert(0, {1100, 0, 0, 0});
  idx.Insert(1, {1200, 0, 0, 0});
  idx.Insert(2, {1150, 0, 0, 0});
  const int level = FreeIndex::Level(1100);
  auto keys = [&] {
    std::map<uint32_t, int64_t> m;
    for (size_t i = 0; i < idx.Bucket(Dim::kCpu, level).size(); ++i) {
      m[idx.Bucket(Dim::kCpu, level)[i]] = idx.BucketKeys(Dim::kCpu, level)[i];
    }
    return m;
  };
  EXPECT_EQ(keys(), (std::map<uint32_t, int64_t>{{0, 1100}, {1, 1200}, {2, 1150}}));
  idx.Update(1, {1110, 0, 0, 0});  // same bucket, new key
  idx.Erase(0);                    // swap-removes: host 2 moves
  EXPECT_EQ(keys(), (std::map<uint32_t, int64_t>{{1, 1110}, {2, 1150}}));
  idx.Update(2, {5000, 0, 0, 0});  // leaves the bucket
  EXPECT_EQ(keys(), (std::map<uint32_t, int64_t>{{1, 1110}}));
  EXPECT_EQ(idx.BucketKeys(Dim::kCpu, FreeIndex::Level(5000))[0], 5000);
}

}  // namespace
}  // namespace paceline::placement
