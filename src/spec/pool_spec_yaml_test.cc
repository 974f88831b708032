#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kGi = int64_t{1} << 30;

constexpr const char* kExample = R"(# pool spec
description: training jobs of the ads team
type: elastic          # elastic | static
resources:
  cpu:    {reservation: 20,   limit: 100,   share: 1}
  memory: {reservation: 64Gi, limit: 256Gi, share: 1}
  gpu:    {reservation: 0,    limit: 8,     share: 2}
controller_limit: 10%   # or a number 10; percent of reservation
slack_limit: 30%
)";

std::string ErrorOf(absl::string_view yaml) {
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec(yaml, "pool.yaml");
  EXPECT_FALSE(spec.ok()) << yaml;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(ParsePoolSpecTest, Example) {
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec(kExample, "pool.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->description, "training jobs of the ads team");
  EXPECT_EQ(spec->type, PoolType::kElastic);
  EXPECT_EQ(spec->dim(Dim::kCpu), (DimSpec{20000, 100000, 1.0}));
  EXPECT_EQ(spec->dim(Dim::kMemory), (DimSpec{64 * kGi, 256 * kGi, 1.0}));
  EXPECT_EQ(spec->dim(Dim::kGpu), (DimSpec{0, 8000, 2.0}));
  EXPECT_EQ(spec->dim(Dim::kDisk), DimSpec{});  // not given: the defaults
  EXPECT_EQ(spec->controller_limit_percent, 10.0);
  EXPECT_EQ(spec->slack_limit_percent, 30.0);
}

TEST(ParsePoolSpecTest, Defaults) {
  absl::StatusOr<PoolSpec> spec = ParsePoolSpec("type: static\n", "p");
  ASSERT_TRUE(spec.ok()) << spec.status();
  PoolSpec expected;
  expected.type = PoolType::kStatic;
  EXPECT_EQ(*spec, expected);
  EXPECT_EQ(spec->dim(Dim::kCpu).limit, kUnlimited);
  EXPECT_EQ(spec->controller_limit_percent, std::nullopt);
}

TEST(ParsePoolSpecTest, PercentForms) {
  for (const char* form : {"10", "10%", "'10%'", "10.0"}) {
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(absl::StrCat("controller_limit: ", form), "p");
    ASSERT_TRUE(spec.ok()) << form << ": " << spec.status();
    EXPECT_EQ(spec->controller_limit_percent, 10.0) << form;
  }
  EXPECT_EQ(ParsePoolSpec("slack_limit: 12.5%", "p")->slack_limit_percent, 12.5);
}

TEST(ParsePoolSpecTest, RetainTerminal) {
  EXPECT_EQ(ParsePoolSpec("type: static\n", "p")->retain_terminal, std::nullopt)
      << "unset: as the parent pool";
  EXPECT_EQ(ParsePoolSpec("retain_terminal: 30d", "p")->retain_terminal, absl::Hours(24 * 30));
  EXPECT_EQ(ParsePoolSpec("retain_terminal: 90m", "p")->retain_terminal, absl::Minutes(90));
  EXPECT_EQ(ParsePoolSpec("retain_terminal: forever", "p")->retain_terminal,
            absl::InfiniteDuration());
  EXPECT_THAT(
      ErrorOf("retain_terminal: 500ms"),
      HasSubstr("retain_terminal: is 500ms; expected at least 1s (such as 7d), or forever"));
  EXPECT_THAT(ErrorOf("retain_terminal: 0"), HasSubstr("expected at least 1s"));
  EXPECT_THAT(ErrorOf("retain_terminal: 7"), HasSubstr("retain_terminal"));
  EXPECT_THAT(ErrorOf("retain_terminal: always"), HasSubstr("is not a duration"));
  for (const char* text : {"retain_terminal: 30d\n", "retain_terminal: forever\n"}) {
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(text, "p");
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<PoolSpec> again = ParsePoolSpec(PrintPoolSpec(*spec), "p");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *spec) << PrintPoolSpec(*spec);
  }
}

TEST(ParsePoolSpecTest, FairShare) {
  EXPECT_EQ(ParsePoolSpec("type: elastic\n", "p")->fair_share, std::nullopt) << "off by default";
  EXPECT_EQ(ParsePoolSpec("fair_share: {half_life: 12h}", "p")->fair_share,
            FairShareSpec{absl::Hours(12)});
  EXPECT_EQ(ParsePoolSpec("fair_share: {}", "p")->fair_share, FairShareSpec{absl::Hours(24)})
      << "the half-life defaults to a day";
  EXPECT_EQ(ErrorOf("fair_share:\n  half_life: 30s\n"),
            "pool.yaml:2:14: fair_share.half_life: is 30s; expected a duration from 1m to 365d, "
            "such as 1d");
  EXPECT_THAT(ErrorOf("fair_share: {half_life: 400d}"), HasSubstr("is 9600h; expected"));
  EXPECT_THAT(ErrorOf("fair_share: {half_life: soon}"),
              HasSubstr("pool.yaml:1:25: fair_share.half_life: 'soon' is not a duration"));
  EXPECT_THAT(ErrorOf("fair_share: 1d"),
              HasSubstr("pool.yaml:1:13: fair_share: is a single value; expected a map"));
  EXPECT_THAT(ErrorOf("fair_share: {weight: 2}"), HasSubstr("unknown key 'weight'"));
  for (const char* text : {"fair_share: {half_life: 90m}\n", "fair_share: {}\n"}) {
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(text, "p");
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<PoolSpec> again = ParsePoolSpec(PrintPoolSpec(*spec), "p");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *spec) << PrintPoolSpec(*spec);
  }
  EXPECT_THAT(PrintPoolSpec(*ParsePoolSpec("fair_share: {half_life: 36h}", "p")),
              HasSubstr("fair_share: {half_life: 36h}"));
}

TEST(ParsePoolSpecTest, UnlimitedLimitAndPartialDims) {
  absl::StatusOr<PoolSpec> spec =
      ParsePoolSpec("resources:\n  disk: {limit: unlimited}\n  cpu: {reservation: 500m}\n", "p");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->dim(Dim::kDisk).limit, kUnlimited);
  EXPECT_EQ(spec->dim(Dim::kCpu).reservation, 500);
  EXPECT_EQ(spec->dim(Dim::kCpu).share, 1.0);
}

TEST(ParsePoolSpecTest, ReservationAboveLimit) {
  EXPECT_EQ(ErrorOf("resources:\n  cpu: {reservation: 200, limit: 100}\n"),
            "pool.yaml:2:22: resources.cpu.reservation: reservation 200 exceeds the limit 100; "
            "expected reservation <= limit");
}

TEST(ParsePoolSpecTest, ShareAndPercentRanges) {
  EXPECT_THAT(ErrorOf("resources:\n  gpu: {share: 0}\n"),
              HasSubstr("pool.yaml:2:16: resources.gpu.share: is 0; expected a weight > 0"));
  EXPECT_THAT(ErrorOf("resources:\n  gpu: {share: -1}\n"), HasSubstr("resources.gpu.share: is -1"));
  EXPECT_THAT(
      ErrorOf("controller_limit: 150%\n"),
      HasSubstr("pool.yaml:1:19: controller_limit: is 150%; expected a percent in (0, 100]"));
  EXPECT_THAT(ErrorOf("slack_limit: 0\n"), HasSubstr("slack_limit: is 0%"));
  EXPECT_THAT(ErrorOf("slack_limit: ten\n"), HasSubstr("slack_limit: 'ten' is not a percent"));
}

TEST(ParsePoolSpecTest, UnknownKeysAndDims) {
  std::string e = ErrorOf("descripton: x\nresources:\n  cpus: {limit: 1}\n  memory: {limt: 1Gi}\n");
  EXPECT_THAT(e, HasSubstr("pool.yaml:1:1: descripton: unknown key 'descripton' (did you mean "
                           "'description'?)"));
  EXPECT_THAT(e, HasSubstr("pool.yaml:3:3: resources.cpus: unknown key 'cpus' (did you mean "
                           "'cpu'?); expected one of: cpu, memory, disk, gpu"));
  EXPECT_THAT(e, HasSubstr("pool.yaml:4:12: resources.memory.limt: unknown key 'limt' (did you "
                           "mean 'limit'?)"));
}

TEST(ParsePoolSpecTest, CollectsEveryError) {
  std::string e =
      ErrorOf("type: elastik\nresources:\n  cpu: {reservation: -1}\n  gpu: {limit: 1.5}\n");
  EXPECT_THAT(e,
              StartsWith("pool.yaml:1:7: type: 'elastik' is not valid (did you mean 'elastic'?)"));
  EXPECT_THAT(e, HasSubstr("\npool.yaml:3:22: resources.cpu.reservation: '-1' is negative"));
  EXPECT_THAT(e, HasSubstr("\npool.yaml:4:16: resources.gpu.limit: '1.5' mixes whole devices"));
}

TEST(ParsePoolSpecTest, NeverThrows) {
  for (const char* text :
       {"\t", "{", "[", "a: &x [*x]", "? [a]\n: 1\n", "\xff\xfe", "%YAML 9\n---\n"}) {
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(text, "p");
    EXPECT_FALSE(spec.ok()) << text;
    EXPECT_THAT(std::string(spec.status().message()), StartsWith("p:")) << text;
  }
}

}  // namespace
}  // namespace paceline
