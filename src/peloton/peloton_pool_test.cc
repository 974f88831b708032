#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "peloton/peloton.h"

namespace paceline::peloton {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kPool = R"(changelog: null
name: Ads
owningteam: ads
ldapgroups: [ads]
description: "Ads training"
resources:
- kind: cpu
  reservation: 4
  limit: 8.5
  share: 2
- kind: memory
  reservation: 1024
  limit: 2048
- kind: disk
  reservation: 0
  limit: 4096
- kind: gpu
  reservation: 1
  limit: 2
controllerlimit:
  maxpercent: 10
policy: 1
)";

std::string Error(const std::string& yaml) {
  auto r = ConvertPool(yaml, "pool.yaml");
  EXPECT_FALSE(r.ok());
  return std::string(r.status().message());
}

TEST(PelotonPoolTest, ResourcesConvertInPaceLinesUnitsWithPelotonsDefaults) {
  auto r = ConvertPool(kPool, "pool.yaml");
  ASSERT_TRUE(r.ok()) << r.status();
  const PoolSpec& p = r->spec;
  EXPECT_EQ(p.description, "Ads training");
  EXPECT_EQ(p.type, PoolType::kElastic);
  EXPECT_EQ(p.dim(Dim::kCpu), (DimSpec{4000, 8500, 2}));
  EXPECT_EQ(p.dim(Dim::kMemory), (DimSpec{1024LL << 20, 2048LL << 20, 1}));
  EXPECT_EQ(p.dim(Dim::kDisk), (DimSpec{0, 4096LL << 20, 1}));
  EXPECT_EQ(p.dim(Dim::kGpu), (DimSpec{1000, 2000, 1}));
  EXPECT_EQ(p.controller_limit_percent, 10);
  EXPECT_EQ(p.slack_limit_percent, 20);  // Peloton's default when slackLimit is not set
  EXPECT_THAT(r->warnings, Contains(StartsWith("pool.yaml:2:7: name: 'Ads' is not kept")));
  EXPECT_THAT(r->warnings, Contains(HasSubstr("ldapGroups: is not kept: in Paceline, who may "
                                              "manage a pool")));
}

TEST(PelotonPoolTest, AKindLeftOutIsZeroAsInPelotonAndSaidSo) {
  auto r = ConvertPool("resources:\n- {kind: cpu, reservation: 1, limit: 2}\n", "pool.yaml");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec.dim(Dim::kMemory), (DimSpec{0, 0, 1}));
  EXPECT_THAT(r->warnings, Contains(HasSubstr("resources: have no memory entry")));
}

TEST(PelotonPoolTest, StaticWhenEveryResourceIsStaticAndRefusedWhenMixed) {
  auto r = ConvertPool(
      "resources:\n- {kind: cpu, reservation: 1, limit: 1, type: 2}\n"
      "- {kind: memory, reservation: 1, limit: 1, type: STATIC}\n",
      "pool.yaml");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec.type, PoolType::kStatic);
  EXPECT_THAT(Error("resources:\n- {kind: cpu, reservation: 1, limit: 1, type: 2}\n"
                    "- {kind: memory, reservation: 1, limit: 1, type: 1}\n"),
              HasSubstr("pool.yaml:2:47: resources[0].type: is STATIC while another resource is "
                        "ELASTIC"));
}

TEST(PelotonPoolTest, BadConfigsAreRefusedWithTheirPlace) {
  EXPECT_THAT(Error("parent: {value: x}\nresources: []\n"),
              HasSubstr("pool.yaml:1:9: parent: is given by the pool's path"));
  EXPECT_THAT(Error("resources:\n- {kind: cpus, limit: 1}\n"),
              HasSubstr("'cpus' is not valid (did you mean 'cpu'?)"));
  EXPECT_THAT(Error("resources:\n- {kind: cpu, limit: 1}\n- {kind: cpu, limit: 2}\n"),
              HasSubstr("'cpu' is listed twice"));
  EXPECT_THAT(
      Error("resources:\n- {kind: cpu, reservation: 3, limit: 2}\n"),
      HasSubstr("pool.yaml:2:28: resources.cpu.reservation: reservation 3 exceeds the limit"));
  EXPECT_THAT(Error("resources:\n- {kind: memory, limit: 0.0000001}\n"),
              HasSubstr("is not a whole number of bytes"));
  EXPECT_THAT(Error("policy: 2\nresources: []\n"), HasSubstr("policy: 2 is not a value"));
  EXPECT_THAT(Error("resources: []\nslacklimit: {maxpercent: 150}\n"), HasSubstr("slack_limit"));
}

TEST(PelotonPoolTest, TheKindOfAConfigIsGuessed) {
  EXPECT_EQ(GuessKind(kPool), ConfigKind::kPool);
  EXPECT_EQ(GuessKind("name: j\ninstancecount: 1\n"), ConfigKind::kJob);
  EXPECT_EQ(GuessKind("name: j\nresources: [x]\nsla: {}\n"), ConfigKind::kJob);
  EXPECT_EQ(GuessKind("{{{"), ConfigKind::kJob);
}

}  // namespace
}  // namespace paceline::peloton
