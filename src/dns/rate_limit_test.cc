#include "dns/rate_limit.h"

#include "gtest/gtest.h"

namespace paceline::dns {
namespace {

using Verdict = RateLimit::Verdict;

const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);

int Answered(RateLimit& limit, absl::string_view source, int queries, absl::Time at) {
  int answered = 0;
  for (int i = 0; i < queries; ++i) answered += limit.Check(source, at) == Verdict::kAnswer;
  return answered;
}

TEST(DnsRateLimit, ASourceGetsItsBurstThenItsRate) {
  RateLimit limit({.rate = 10, .burst = 20, .slip = 0});
  EXPECT_EQ(Answered(limit, "198.18.0.5", 100, kT0), 20);
  EXPECT_EQ(Answered(limit, "198.18.0.5", 100, kT0 + absl::Milliseconds(500)), 5);
  EXPECT_EQ(Answered(limit, "198.18.0.5", 100, kT0 + absl::Seconds(10)), 20);  // capped
  EXPECT_EQ(limit.refused(), 80u + 95u + 80u);
}

TEST(DnsRateLimit, SourcesAreLimitedApart) {
  RateLimit limit({.rate = 10, .burst = 5, .slip = 0});
  EXPECT_EQ(Answered(limit, "198.18.0.5", 50, kT0), 5);
  EXPECT_EQ(Answered(limit, "198.18.0.6", 50, kT0), 5);
  EXPECT_EQ(limit.sources(), 2u);
}

TEST(DnsRateLimit, RefusedQueriesSlipATruncatedAnswerOneTimeInN) {
  RateLimit limit({.rate = 1, .burst = 1, .slip = 3});
  ASSERT_EQ(limit.Check("a", kT0), Verdict::kAnswer);
  int truncated = 0, dropped = 0;
  for (int i = 0; i < 30; ++i) {
    Verdict v = limit.Check("a", kT0);
    truncated += v == Verdict::kTruncate;
    dropped += v == Verdict::kDrop;
  }
  EXPECT_EQ(truncated, 10);
  EXPECT_EQ(dropped, 20);
}

TEST(DnsRateLimit, AFloodOfForgedSourcesStaysBoundedAndShares) {
  RateLimit limit({.rate = 10, .burst = 2, .max_sources = 100, .slip = 0});
  int answered = 0;
  for (int i = 0; i < 10'000; ++i) {
    answered += limit.Check("10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256),
                            kT0) == Verdict::kAnswer;
  }
  EXPECT_EQ(limit.sources(), 100u);
  // One query each from the 100 sources held, and the overflow bucket's 2 for everyone else.
  EXPECT_EQ(answered, 102);
  // Once the held sources have been quiet long enough, new ones get buckets of their own.
  EXPECT_EQ(Answered(limit, "192.0.2.1", 5, kT0 + absl::Seconds(1)), 2);
  EXPECT_LE(limit.sources(), 100u);
}

TEST(DnsRateLimit, ARateOfZeroLimitsNothing) {
  RateLimit limit({.rate = 0});
  EXPECT_EQ(Answered(limit, "a", 100'000, kT0), 100'000);
  EXPECT_EQ(limit.sources(), 0u);
}

}  // namespace
}  // namespace paceline::dns
