#include "image/testing/image_builder.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "image/digest.h"
#include "image/testing/tar_builder.h"
#include "nlohmann/json.hpp"

namespace paceline::image::testing {
namespace {

std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ImageBuilderTest, BuildsAConsistentImage) {
  TarBuilder t1;
  std::string tar1 = t1.Dir("app").File("app/a.txt", "a\n").Finish(false);
  TarBuilder t2;
  std::string tar2 = t2.File("b.txt", "b\n").Finish(false);
  Image image = ImageBuilder()
                    .Layer(tar1)
                    .Layer(tar2)
                    .Entrypoint({"/bin/sh", "-c"})
                    .Cmd({"echo hi"})
                    .Env({"A=1"})
                    .WorkingDir("/app")
                    .User("65534")
                    .Build();
  ASSERT_EQ(image.layers.size(), 2u);
  EXPECT_EQ(Gunzip(image.layers[0].data), tar1);
  EXPECT_EQ(Gunzip(image.layers[1].data), tar2);
  EXPECT_EQ(image.diff_ids, (std::vector<std::string>{Sha256Digest(tar1), Sha256Digest(tar2)}));

  auto m = ParseManifest(image.manifest.data);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(image.manifest.media_type, kOciManifest);
  EXPECT_EQ(image.manifest.digest, Sha256Digest(image.manifest.data));
  EXPECT_EQ(m->config.digest, image.config.digest);
  EXPECT_EQ(m->config.size, static_cast<int64_t>(image.config.data.size()));
  ASSERT_EQ(m->layers.size(), 2u);
  EXPECT_EQ(m->layers[1].digest, Sha256Digest(image.layers[1].data));
  EXPECT_EQ(m->layers[1].media_type, kOciLayerGzip);

  auto c = ParseImageConfig(image.config.data);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->diff_ids, image.diff_ids);
  EXPECT_EQ(c->entrypoint, (std::vector<std::string>{"/bin/sh", "-c"}));
  EXPECT_EQ(c->cmd, (std::vector<std::string>{"echo hi"}));
  EXPECT_EQ(c->env, (std::vector<std::string>{"A=1"}));
  EXPECT_EQ(c->working_dir, "/app");
  EXPECT_EQ(c->user, "65534");
  EXPECT_EQ(c->os, "linux");
  EXPECT_EQ(c->architecture, HostArchitecture());
  EXPECT_EQ(image.blobs().size(), 3u);
}

TEST(ImageBuilderTest, MakesAnIndex) {
  Image a = ImageBuilder().Build();
  Image b = ImageBuilder().Architecture("s390x").Build();
  Blob index =
      MakeIndex({{a.manifest, {"linux", "amd64", ""}}, {b.manifest, {"linux", "s390x", ""}}});
  EXPECT_EQ(index.media_type, kOciIndex);
  auto parsed = ParseIndex(index.data);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->manifests.size(), 2u);
  EXPECT_EQ(parsed->manifests[1].digest, b.manifest.digest);
  EXPECT_EQ(parsed->manifests[1].platform->architecture, "s390x");
}

TEST(ImageBuilderTest, BusyboxImageHasAShell) {
  auto image = BusyboxImage();
  ASSERT_TRUE(image.ok()) << image.status();
  ASSERT_EQ(image->layers.size(), 1u);
  std::string tar = Gunzip(image->layers[0].data);
  EXPECT_EQ(Sha256Digest(tar), image->diff_ids[0]);
  EXPECT_THAT(tar, ::testing::HasSubstr("bin/busybox"));
  EXPECT_THAT(tar, ::testing::HasSubstr("nobody:x:65534:65534"));
  EXPECT_GT(tar.size(), 500'000u);  // the static binary itself
  auto c = ParseImageConfig(image->config.data);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cmd, (std::vector<std::string>{"/bin/sh"}));
}

TEST(ImageBuilderTest, WritesAnOciLayout) {
  TarBuilder t;
  Image image = ImageBuilder().Layer(t.File("x", "y").Finish(false)).Build();
  std::string dir = ::testing::TempDir() + "oci-layout-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  ASSERT_TRUE(WriteOciLayout(image, dir, "v1").ok());
  EXPECT_EQ(ReadAll(dir + "/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
  auto index = nlohmann::json::parse(ReadAll(dir + "/index.json"));
  EXPECT_EQ(index["schemaVersion"], 2);
  EXPECT_EQ(index["manifests"][0]["digest"], image.manifest.digest);
  EXPECT_EQ(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"], "v1");
  std::vector<const Blob*> blobs = image.blobs();
  blobs.push_back(&image.manifest);
  for (const Blob* b : blobs) {
    auto digest = Sha256File(dir + "/blobs/sha256/" + DigestHex(b->digest));
    ASSERT_TRUE(digest.ok()) << digest.status();
    EXPECT_EQ(*digest, b->digest);
  }
  std::string tar = OciLayoutTar(image, "v1");
  EXPECT_THAT(tar, ::testing::HasSubstr("blobs/sha256/" + DigestHex(image.config.digest)));
  EXPECT_THAT(tar, ::testing::HasSubstr("org.opencontainers.image.ref.name"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::image::testing
