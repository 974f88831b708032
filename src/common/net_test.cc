#include "common/net.h"

#include <gtest/gtest.h>

namespace paceline {
namespace {

TEST(ParseHostPort, Accepts) {
  auto a = ParseHostPort("127.0.0.1:5390");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 5390);
  EXPECT_EQ(a->ToString(), "127.0.0.1:5390");
  auto b = ParseHostPort("[::1]:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->ToString(), "[::1]:0");
}

TEST(ParseHostPort, Rejects) {
  EXPECT_FALSE(ParseHostPort("localhost").ok());
  EXPECT_FALSE(ParseHostPort(":80").ok());
  EXPECT_FALSE(ParseHostPort("h:65536").ok());
  EXPECT_FALSE(ParseHostPort("h:x").ok());
  EXPECT_NE(ParseHostPort("h:x").status().message().find("HOST:PORT"), absl::string_view::npos);
}

}  // namespace
}  // namespace paceline
