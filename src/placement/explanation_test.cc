#include "placement/explanation.h"

#include <gtest/gtest.h>

namespace paceline::placement {
namespace {

TEST(Explanation, ThousandsSeparators) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(50000), "50,000");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
  EXPECT_EQ(WithThousands(-41200), "-41,200");
}

TEST(Explanation, OneLineMatchesTheWhyPendingFormat) {
  Explanation e;
  e.hosts_considered = 50000;
  e.rejections.push_back({"resource_fit", "insufficient memory", 41200, Dim::kMemory,
                          int64_t{64} << 30, int64_t{48} << 30});
  e.rejections.push_back({"labels", "zone not in [a b]", 8800, std::nullopt, 0, 0});
  EXPECT_EQ(e.OneLine(),
            "0/50,000 hosts: 41,200 insufficient memory (asked 64Gi, best 48Gi), "
            "8,800 zone not in [a b]");
  ASSERT_NE(e.ShortestResource(), nullptr);
  EXPECT_EQ(e.ShortestResource()->dimension, Dim::kMemory);
}

TEST(Explanation, NeverFitsAndGangPrefix) {
  Explanation e;
  e.hosts_considered = 3;
  e.never_fits = true;
  e.never_fits_reasons.push_back({"gpu_models", "no GPU of model [A100]", 3, Dim::kGpu, 1, 0});
  EXPECT_EQ(e.OneLine(), "never fits any of 3 hosts: 3 no GPU of model [A100]");
  Explanation g;
  g.hosts_considered = 10;
  g.gang_size = 10000;
  g.gang_placed = 9876;
  g.rejections.push_back({"gpu_devices", "fewer than 1 free GPUs", 10, Dim::kGpu, 1, 0});
  EXPECT_EQ(g.OneLine(),
            "gang of 10,000 (9,876 placed, released): 0/10 hosts: 10 fewer than 1 free GPUs");
}

}  // namespace
}  // namespace paceline::placement
