#include "resmgr/pool_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Spec;

TEST(PoolTreeTest, CreatesNestedPoolsAndFindsThemByPath) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec().Cpu(50)).ok());
  auto training = tree.Create("/ads/training", Spec().Cpu(30));
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_EQ(tree.size(), 3u);
  EXPECT_EQ(tree.path(*training), "/ads/training");
  EXPECT_EQ(tree.parent(*training), *tree.Find("/ads"));
  EXPECT_EQ(tree.depth(*training), 2);
  EXPECT_TRUE(tree.IsLeaf(*training));
  EXPECT_FALSE(tree.IsLeaf(*tree.Find("/ads")));
  EXPECT_EQ(tree.Lookup("/nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(tree.Lookup("/nope").status().message(), "pool /nope does not exist");
}

TEST(PoolTreeTest, CreateRejectsBadPathMissingParentAndDuplicates) {
  PoolTree tree;
  EXPECT_EQ(tree.Create("ads", Spec()).status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = tree.Create("/ads/training", Spec());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot create pool /ads/training: parent /ads does not exist");
  ASSERT_TRUE(tree.Create("/ads", Spec()).ok());
  auto dup = tree.Create("/ads", Spec());
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "pool /ads already exists");
  EXPECT_EQ(tree.Create("/", Spec()).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(PoolTreeTest, RejectsReservationAboveLimitNamingPoolDimensionAndNumbers) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec()).ok());
  auto s = tree.Create("/ads/training", Spec().Cpu(30, 20));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "pool /ads/training: cpu reservation 30 exceeds limit 20");
  auto mem = tree.Create("/ads/x", Spec().MemGi(4, 2));
  EXPECT_EQ(mem.status().message(), "pool /ads/x: memory reservation 4Gi exceeds limit 2Gi");
}

TEST(PoolTreeTest, RejectsBadSharesAndPercents) {
  PoolTree tree;
  EXPECT_EQ(tree.Create("/a", Spec().Cpu(1, 2, 0)).status().message(),
            "pool /a: cpu share 0 must be a positive number");
  EXPECT_EQ(tree.Create("/a", Spec().Cpu(-1)).status().message(),
            "pool /a: cpu reservation -1000 is negative");
  EXPECT_EQ(tree.Create("/a", Spec().ControllerLimit(0)).status().message(),
            "pool /a: controller_limit 0% must be in (0, 100]");
  EXPECT_EQ(tree.Create("/a", Spec().SlackLimit(101)).status().message(),
            "pool /a: slack_limit 101% must be in (0, 100]");
}

TEST(PoolTreeTest, RejectsChildLimitAboveParentLimit) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec().Cpu(10, 40)).ok());
  auto s = tree.Create("/ads/training", Spec().Cpu(0, 50));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.status().message(),
            "pool /ads/training: cpu limit 50 exceeds the cpu limit 40 of parent /ads");
  // An unlimited child under a limited parent breaks the rule too.
  EXPECT_THAT(tree.Create("/ads/x", Spec()).status().message(),
              HasSubstr("cpu limit unlimited exceeds the cpu limit 40 of parent /ads"));
}

TEST(PoolTreeTest, RejectsChildrenReservationsAboveParentReservation) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec().Cpu(40)).ok());
  ASSERT_TRUE(tree.Create("/ads/a", Spec().Cpu(25)).ok());
  auto s = tree.Create("/ads/b", Spec().Cpu(20));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.status().message(),
            "pool /ads/b: cpu reservation 20 plus the siblings' 25 exceeds the cpu reservation "
            "40 of parent /ads");
  EXPECT_TRUE(tree.Create("/ads/b", Spec().Cpu(15)).ok());
}

TEST(PoolTreeTest, RootChildrenAreNotCheckedAgainstAnything) {
  PoolTree tree;
  EXPECT_TRUE(tree.Create("/a", Spec().Cpu(1e6)).ok());
  EXPECT_TRUE(tree.Create("/b", Spec().Cpu(1e6)).ok());
  EXPECT_THAT(tree.Violations(), IsEmpty());
}

TEST(PoolTreeTest, UpdateThatBreaksTheTreeIsRefusedUnlessForced) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec().Cpu(40, 100)).ok());
  ASSERT_TRUE(tree.Create("/ads/a", Spec().Cpu(30, 80)).ok());
  // Lowering /ads below its child's reservation and limit.
  auto refused = tree.Update("/ads", Spec().Cpu(20, 50), /*force=*/false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("use force"));
  EXPECT_EQ(tree.spec(*tree.Find("/ads")).dim(Dim::kCpu).reservation, Cores(40));

  auto forced = tree.Update("/ads", Spec().Cpu(20, 50), /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_THAT(*forced,
              ElementsAre("pool /ads: cpu limit 50 is below the cpu limit 80 of child /ads/a",
                          "pool /ads: cpu reservation 20 is below the sum 30 of its children's "
                          "reservations"));
  EXPECT_EQ(tree.spec(*tree.Find("/ads")).dim(Dim::kCpu).limit, Cores(50));
  EXPECT_THAT(tree.Violations(),
              ElementsAre("pool /ads: cpu reservation 20 is below the sum 30 of its children's "
                          "reservations",
                          "pool /ads/a: cpu limit 80 exceeds the cpu limit 50 of parent /ads"));
  // A valid update reports nothing broken.
  auto ok = tree.Update("/ads", Spec().Cpu(40, 100), false);
  ASSERT_TRUE(ok.ok());
  EXPECT_THAT(*ok, IsEmpty());
  EXPECT_THAT(tree.Violations(), IsEmpty());
}

TEST(PoolTreeTest, UpdateCannotBeForcedPastPerPoolRules) {
  PoolTree tree;
  ASSERT_TRUE(tree.Create("/ads", Spec()).ok());
  auto s = tree.Update("/ads", Spec().Cpu(30, 20), /*force=*/true);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Update("/", Spec(), true).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tree.Update("/nope", Spec(), true).status().code(), absl::StatusCode::kNotFound);
}

TEST(PoolTreeTest, DeletesOnlyLeavesAndNeverReusesIds) {
  PoolTree tree;
  auto ads = tree.Create("/ads", Spec());
  auto a = tree.Create("/ads/a", Spec());
  ASSERT_TRUE(ads.ok() && a.ok());
  auto s = tree.Delete("/ads");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "pool /ads has 1 child pool(s); delete them first");
  EXPECT_EQ(tree.Delete("/").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tree.Delete("/zzz").code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(tree.Delete("/ads/a").ok());
  EXPECT_FALSE(tree.Exists(*a));
  EXPECT_TRUE(tree.IsLeaf(*ads));
  auto again = tree.Create("/ads/a", Spec());
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, *a);
  EXPECT_EQ(tree.size(), 3u);
}

TEST(PoolTreeTest, LayoutIsBreadthFirstWithContiguousChildren) {
  PoolTree tree;
  for (absl::string_view p : {"/a", "/b", "/a/x", "/b/y", "/a/z"}) {
    ASSERT_TRUE(tree.Create(p, Spec()).ok());
  }
  const PoolLayout& l = tree.layout();
  std::vector<std::string> order;
  for (PoolId id : l.id) order.push_back(tree.path(id));
  EXPECT_THAT(order, ElementsAre("/", "/a", "/b", "/a/x", "/a/z", "/b/y"));
  EXPECT_EQ(l.child_begin[1], 3u);  // /a -> /a/x, /a/z
  EXPECT_EQ(l.child_end[1], 5u);
  EXPECT_EQ(l.parent[5], 2u);  // /b/y under /b
  std::vector<std::string> leaves;
  for (PoolId id : l.leaves) leaves.push_back(tree.path(id));
  EXPECT_THAT(leaves, ElementsAre("/a/x", "/a/z", "/b/y"));
  const uint64_t v = tree.version();
  ASSERT_TRUE(tree.Delete("/a/x").ok());
  EXPECT_GT(tree.version(), v);
  EXPECT_EQ(tree.layout().id.size(), 5u);
  EXPECT_EQ(tree.layout().position[tree.Find("/a/z")->value()], 3u);
}

TEST(PoolTreeTest, ControllerAndSlackCapsArePercentsOfTheReservation) {
  PoolSpec spec = Spec().Cpu(10, 20).MemGi(8, 16).ControllerLimit(25).SlackLimit(50);
  EXPECT_EQ(ControllerCap(spec), Resources::Of(Cores(2.5), 2 * testing::kGi));
  // Slack limit applies to non-cpu dimensions only; cpu stays at the limit.
  EXPECT_EQ(SlackCap(spec), Resources::Of(Cores(20), 4 * testing::kGi, 0, 0));
  PoolSpec plain = Spec().Cpu(10, 20);
  EXPECT_EQ(ControllerCap(plain), Resources::Filled(kUnlimited));
  EXPECT_EQ(SlackCap(plain), plain.Limit());
}

}  // namespace
}  // namespace paceline::resmgr
