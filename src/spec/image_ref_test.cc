// Image references as job specs write them (spec/image_ref.h).
#include "spec/image_ref.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::spec {
namespace {

using ::testing::HasSubstr;

constexpr char kDigest[] =
    "sha256:a2693469ab7ccebd6ce949f3323db225b0803a546eb8651cbf16a38acbe1b273";

TEST(ImageRefTest, TheFormsOfAReference) {
  ImageRef r = *ParseImageRef("registry.example.com:5000/team/trainer:1.4");
  EXPECT_EQ(r.registry, "registry.example.com:5000");
  EXPECT_EQ(r.repository, "team/trainer");
  EXPECT_EQ(r.tag, "1.4");
  EXPECT_EQ(r.ManifestReference(), "1.4");
  EXPECT_EQ(r.ToString(), "registry.example.com:5000/team/trainer:1.4");

  r = *ParseImageRef("busybox");
  EXPECT_EQ(r.ToString(), "docker.io/library/busybox:latest");
  r = *ParseImageRef("team/app");
  EXPECT_EQ(r.ToString(), "docker.io/team/app:latest");
  r = *ParseImageRef("localhost/app");
  EXPECT_EQ(r.registry, "localhost");
  r = *ParseImageRef(std::string("127.0.0.1:5000/a/b@") + kDigest);
  EXPECT_EQ(r.tag, "");
  EXPECT_EQ(r.ManifestReference(), kDigest);
  r = *ParseImageRef(std::string("r.io/a:1@") + kDigest);
  EXPECT_EQ(r.tag, "1");
  EXPECT_EQ(r.ManifestReference(), kDigest);
  EXPECT_EQ(ParseImageRef("team/a__b.c-d---e").value().repository, "team/a__b.c-d---e");
  // A first component with a dot is a registry, as in Docker.
  EXPECT_EQ(ParseImageRef("a.b/c").value().registry, "a.b");
}

TEST(ImageRefTest, BadReferencesSayWhatIsWrong) {
  EXPECT_THAT(ParseImageRef("").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseImageRef("Team/App").status().message(), HasSubstr("\"Team\""));
  EXPECT_THAT(ParseImageRef("r.io/a:-bad").status().message(), HasSubstr("tag \"-bad\""));
  EXPECT_THAT(ParseImageRef("r.io/a@sha256:abc").status().message(), HasSubstr("digest"));
  EXPECT_THAT(ParseImageRef("r.io/a//b").status().message(), HasSubstr("component \"\""));
  EXPECT_THAT(ParseImageRef("r.io/").status().message(), HasSubstr("no repository"));
  EXPECT_THAT(ParseImageRef("r.io/a_/b").status().message(), HasSubstr("\"a_\""));
  EXPECT_THAT(ParseImageRef("bad host!/a").status().message(), HasSubstr("host"));
  EXPECT_THAT(ParseImageRef(std::string(300, 'a')).status().message(), HasSubstr("longer"));
}

}  // namespace
}  // namespace paceline::spec
