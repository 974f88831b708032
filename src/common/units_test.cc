#include "common/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

TEST(ParseCpu, CoresAndMillicores) {
  EXPECT_EQ(*ParseCpu("0"), 0);
  EXPECT_EQ(*ParseCpu("1"), 1000);
  EXPECT_EQ(*ParseCpu("0.5"), 500);
  EXPECT_EQ(*ParseCpu(".5"), 500);
  EXPECT_EQ(*ParseCpu("2."), 2000);
  EXPECT_EQ(*ParseCpu("1.25"), 1250);
  EXPECT_EQ(*ParseCpu("500m"), 500);
  EXPECT_EQ(*ParseCpu("1m"), 1);
  EXPECT_EQ(*ParseCpu(" 4 "), 4000);
  EXPECT_EQ(*ParseCpu("0.001"), 1);
  EXPECT_EQ(*ParseCpu("1.000000000"), 1000);
}

TEST(ParseCpu, RejectsBadInput) {
  EXPECT_THAT(ParseCpu("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseCpu("-1").status().message(), HasSubstr("negative"));
  EXPECT_THAT(ParseCpu("0.0005").status().message(), HasSubstr("finer than"));
  EXPECT_THAT(ParseCpu("0.5m").status().message(), HasSubstr("finer than"));
  EXPECT_THAT(ParseCpu("abc").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseCpu("1.2.3").status().message(), HasSubstr("two dots"));
  EXPECT_THAT(ParseCpu("1e3").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseCpu("2 cores").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseCpu("m").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseCpu(".").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseCpu("0.0000000001").status().message(), HasSubstr("9 decimal places"));
}

TEST(ParseCpu, Overflow) {
  EXPECT_THAT(ParseCpu("99999999999999999999").status().message(), HasSubstr("too large"));
  EXPECT_THAT(ParseCpu("9223372036854775808m").status().message(), HasSubstr("too large"));
  EXPECT_EQ(*ParseCpu("9223372036854775807m"), INT64_MAX);
  EXPECT_THAT(ParseCpu("9223372036854775807").status().message(), HasSubstr("too large"));
}

TEST(ParseBytes, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseBytes("0"), 0);
  EXPECT_EQ(*ParseBytes("1024"), 1024);
  EXPECT_EQ(*ParseBytes("1Ki"), 1024);
  EXPECT_EQ(*ParseBytes("512Mi"), 512 * kMi);
  EXPECT_EQ(*ParseBytes("2Gi"), 2 * kGi);
  EXPECT_EQ(*ParseBytes("1.5Gi"), 3 * kGi / 2);
  EXPECT_EQ(*ParseBytes("1Ti"), 1024 * kGi);
  EXPECT_EQ(*ParseBytes("1G"), 1'000'000'000);
  EXPECT_EQ(*ParseBytes("100M"), 100'000'000);
  EXPECT_EQ(*ParseBytes("1k"), 1000);
  EXPECT_EQ(*ParseBytes("1K"), 1000);
  EXPECT_EQ(*ParseBytes("7Ei"), 7 * (int64_t{1} << 60));
  EXPECT_EQ(*ParseBytes("0.5Ki"), 512);
}

TEST(ParseBytes, RejectsBadInput) {
  EXPECT_THAT(ParseBytes("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseBytes("-1Gi").status().message(), HasSubstr("negative"));
  EXPECT_THAT(ParseBytes("1GB").status().message(), HasSubstr("did you mean Gi or G?"));
  EXPECT_THAT(ParseBytes("512m").status().message(), HasSubstr("'m' means milli"));
  EXPECT_THAT(ParseBytes("10B").status().message(), HasSubstr("plain bytes"));
  EXPECT_THAT(ParseBytes("1Xi").status().message(), HasSubstr("unknown unit 'Xi'"));
  EXPECT_THAT(ParseBytes("0.1").status().message(), HasSubstr("finer than"));
  EXPECT_THAT(ParseBytes("Gi").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseBytes("1 Gi").status().message(), HasSubstr("not a number"));
}

TEST(ParseBytes, Overflow) {
  EXPECT_THAT(ParseBytes("8Ei").status().message(), HasSubstr("too large"));
  EXPECT_THAT(ParseBytes("10000000000000000000Ei").status().message(), HasSubstr("too large"));
  EXPECT_EQ(*ParseBytes("9223372036854775807"), INT64_MAX);
  // 28 significant digits times Pi overflows even 128 bits (found by the fuzzer).
  EXPECT_THAT(ParseBytes("599223703202237032.685475807Pi").status().message(),
              HasSubstr("too large"));
}

TEST(ParseGpu, WholeDevicesAndFractions) {
  EXPECT_EQ(*ParseGpu("0"), 0);
  EXPECT_EQ(*ParseGpu("1"), 1000);
  EXPECT_EQ(*ParseGpu("8"), 8000);
  EXPECT_EQ(*ParseGpu("0.5"), 500);
  EXPECT_EQ(*ParseGpu("0.25"), 250);
  EXPECT_EQ(*ParseGpu("0.001"), 1);
  EXPECT_EQ(*ParseGpu("1.0"), 1000);
  EXPECT_EQ(*ParseGpu("2.000"), 2000);
}

TEST(ParseGpu, RejectsMixedAndBadInput) {
  EXPECT_THAT(ParseGpu("1.5").status().message(), HasSubstr("mixes whole devices"));
  EXPECT_THAT(ParseGpu("0.0001").status().message(), HasSubstr("finer than"));
  EXPECT_THAT(ParseGpu("-0.5").status().message(), HasSubstr("negative"));
  EXPECT_THAT(ParseGpu("half").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseGpu("").status().message(), HasSubstr("empty"));
}

TEST(ParseQuantity, DispatchesOnDimension) {
  EXPECT_EQ(*ParseQuantity(Dim::kCpu, "2"), 2000);
  EXPECT_EQ(*ParseQuantity(Dim::kMemory, "1Ki"), 1024);
  EXPECT_EQ(*ParseQuantity(Dim::kDisk, "1Ki"), 1024);
  EXPECT_EQ(*ParseQuantity(Dim::kGpu, "0.5"), 500);
}

TEST(Format, ShortestExactForms) {
  EXPECT_EQ(FormatCpu(1500), "1.5");
  EXPECT_EQ(FormatCpu(2000), "2");
  EXPECT_EQ(FormatCpu(1), "0.001");
  EXPECT_EQ(FormatCpu(0), "0");
  EXPECT_EQ(FormatCpu(-250), "-0.25");
  EXPECT_EQ(FormatGpu(500), "0.5");
  EXPECT_EQ(FormatGpu(4000), "4");
  EXPECT_EQ(FormatBytes(2 * kGi), "2Gi");
  EXPECT_EQ(FormatBytes(3 * kGi / 2), "1536Mi");
  EXPECT_EQ(FormatBytes(1'000'000), "1M");
  EXPECT_EQ(FormatBytes(1000), "1k");
  EXPECT_EQ(FormatBytes(7), "7");
  EXPECT_EQ(FormatBytes(0), "0");
  EXPECT_EQ(FormatBytes(-kMi), "-1Mi");
  EXPECT_EQ(FormatBytes(kUnlimited), "unlimited");
  EXPECT_EQ(FormatQuantity(Dim::kCpu, kUnlimited), "unlimited");
  EXPECT_EQ(FormatBytes(INT64_MIN), "-9223372036854775808");
}

TEST(Format, RoundTripsThroughParse) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1001},
                    int64_t{123456789}, INT64_MAX - 1}) {
    EXPECT_EQ(*ParseCpu(FormatCpu(v)), v) << v;
    EXPECT_EQ(*ParseBytes(FormatBytes(v)), v) << v;
  }
  for (int64_t b : {kMi, kGi, 3 * kGi / 2, int64_t{1'000'000'000}, int64_t{1} << 62}) {
    EXPECT_EQ(*ParseBytes(FormatBytes(b)), b) << b;
  }
  for (int64_t g = 0; g <= 1000; ++g) EXPECT_EQ(*ParseGpu(FormatGpu(g)), g) << g;
  for (int64_t g : {2000, 8000, 16000}) EXPECT_EQ(*ParseGpu(FormatGpu(g)), g) << g;
}

TEST(FormatBytesApprox, RoundsForTables) {
  EXPECT_EQ(FormatBytesApprox(512), "512");
  EXPECT_EQ(FormatBytesApprox(3 * kGi / 2), "1.5Gi");
  EXPECT_EQ(FormatBytesApprox(2 * kGi), "2Gi");
  EXPECT_EQ(FormatBytesApprox(1'000'000'000), "953.7Mi");
}

TEST(Durations, StrictParsing) {
  EXPECT_EQ(*ParseDurationStrict("30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseDurationStrict("2h"), absl::Hours(2));
  EXPECT_EQ(*ParseDurationStrict("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseDurationStrict("30d"), absl::Hours(30 * 24));
  EXPECT_FALSE(ParseDurationStrict("1.5d").ok());
  EXPECT_FALSE(ParseDurationStrict("-1d").ok());
  EXPECT_EQ(*ParseDurationStrict("500ms"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseDurationStrict("0"), absl::ZeroDuration());
  EXPECT_THAT(ParseDurationStrict("30").status().message(), HasSubstr("no unit"));
  EXPECT_THAT(ParseDurationStrict("-5s").status().message(), HasSubstr("negative"));
  EXPECT_THAT(ParseDurationStrict("inf").status().message(), HasSubstr("not a duration"));
  EXPECT_THAT(ParseDurationStrict("5 minutes").status().message(), HasSubstr("not a duration"));
  EXPECT_THAT(ParseDurationStrict("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseDurationStrict("5w").status().message(), HasSubstr("not a duration"));
}

TEST(Durations, FormatRoundTrips) {
  for (absl::Duration d : {absl::ZeroDuration(), absl::Seconds(30), absl::Minutes(90),
                           absl::Milliseconds(1500), absl::Hours(48)}) {
    EXPECT_EQ(*ParseDurationStrict(FormatDurationShort(d)), d) << FormatDurationShort(d);
  }
}

}  // namespace
}  // namespace paceline
