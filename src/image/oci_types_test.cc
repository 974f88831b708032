#include "image/oci_types.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::image {
namespace {

using ::testing::HasSubstr;

const std::string kD1 = "sha256:" + std::string(64, 'a');
const std::string kD2 = "sha256:" + std::string(64, 'b');
const std::string kD3 = "sha256:" + std::string(64, 'c');

std::string OciManifestJson() {
  return absl::StrCat(R"({"schemaVersion":2,"mediaType":")", kOciManifest, R"(",
    "config":{"mediaType":")",
                      kOciConfig, R"(","digest":")", kD1, R"(","size":120},
    "layers":[{"mediaType":")",
                      kOciLayerGzip, R"(","digest":")", kD2, R"(","size":0},
              {"mediaType":")",
                      kOciLayerGzip, R"(","digest":")", kD3, R"(","size":33,
               "annotations":{"a":"b"}}]})");
}

TEST(OciTypesTest, ParsesAnOciManifest) {
  auto m = ParseManifest(OciManifestJson());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->media_type, kOciManifest);
  EXPECT_EQ(m->config.media_type, kOciConfig);
  EXPECT_EQ(m->config.digest, kD1);
  EXPECT_EQ(m->config.size, 120);
  ASSERT_EQ(m->layers.size(), 2u);
  EXPECT_EQ(m->layers[0].size, 0);
  EXPECT_EQ(m->layers[1].digest, kD3);
  EXPECT_FALSE(m->layers[1].platform.has_value());
}

TEST(OciTypesTest, ParsesADockerManifestAndDefaultsTheMediaType) {
  std::string docker = absl::StrReplaceAll(
      OciManifestJson(), {{kOciManifest, kDockerManifest}, {kOciLayerGzip, kDockerLayerGzip}});
  auto m = ParseManifest(docker);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->media_type, kDockerManifest);
  EXPECT_EQ(m->layers[0].media_type, kDockerLayerGzip);

  std::string bare = absl::StrReplaceAll(
      OciManifestJson(), {{absl::StrCat(R"("mediaType":")", kOciManifest, R"(",)"), ""}});
  m = ParseManifest(bare);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->media_type, kOciManifest);
}

// Each broken manifest and the message that must name what is wrong.
TEST(OciTypesTest, ManifestErrorsNameTheField) {
  const std::string good = OciManifestJson();
  struct Case {
    std::string json;
    std::string message;
  };
  const Case cases[] = {
      {"not json", "manifest: not valid JSON"},
      {"[1,2]", "manifest: expected a JSON object, got array"},
      {absl::StrReplaceAll(good, {{R"("schemaVersion":2)", R"("schemaVersion":1)"}}),
       "manifest: schemaVersion: expected 2, got 1"},
      {absl::StrReplaceAll(good, {{R"("schemaVersion":2,)", ""}}),
       "manifest: schemaVersion: required"},
      {absl::StrReplaceAll(good, {{R"("schemaVersion":2)", R"("schemaVersion":"2")"}}),
       "manifest: schemaVersion: expected 2, got \"2\""},
      {absl::StrReplaceAll(good, {{kD3, "sha256:abc"}}),
       "manifest: layers[1].digest: expected sha256:<64 hex>, got \"sha256:abc\""},
      {absl::StrReplaceAll(good, {{kD3, "sha256:" + std::string(64, 'A')}}),
       "manifest: layers[1].digest: expected sha256:<64 hex>"},
      {absl::StrReplaceAll(good, {{kD1, "sha512:" + std::string(64, 'a')}}),
       "manifest: config.digest: expected sha256:<64 hex>"},
      {absl::StrReplaceAll(good, {{R"("size":33)", R"("size":-1)"}}),
       "manifest: layers[1].size: expected >= 0, got -1"},
      {absl::StrReplaceAll(good, {{R"("size":33)", R"("size":3.5)"}}),
       "manifest: layers[1].size: expected an integer >= 0, got 3.5"},
      {absl::StrReplaceAll(good, {{R"("size":33)", R"("size":"33")"}}),
       "manifest: layers[1].size: expected an integer >= 0"},
      {absl::StrReplaceAll(good, {{R"("size":33)", R"("size":18446744073709551615)"}}),
       "manifest: layers[1].size: too large"},
      {absl::StrReplaceAll(good, {{R"(,"size":0)", ""}}), "manifest: layers[0].size: required"},
      {absl::StrReplaceAll(good, {{R"("layers")", R"("layerz")"}}), "manifest: layers: required"},
      {absl::StrReplaceAll(good, {{R"("config")", R"("konfig")"}}), "manifest: config: required"},
      {absl::StrReplaceAll(good, {{kOciManifest, kOciIndex}}),
       "manifest: mediaType: expected an image manifest type"},
      {absl::StrReplaceAll(good, {{absl::StrCat(R"("mediaType":")", kOciConfig, R"(",)"), ""}}),
       "manifest: config.mediaType: required"},
      {absl::StrReplaceAll(good, {{absl::StrCat(R"(")", kOciConfig, R"(")"), "7"}}),
       "manifest: config.mediaType: expected a string, got number"},
  };
  for (const Case& c : cases) {
    auto m = ParseManifest(c.json);
    ASSERT_FALSE(m.ok()) << c.json;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(c.message)) << c.json;
  }
  auto m = ParseManifest(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + kD1 +
                         R"(","size":1},"layers":[7]})");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("manifest: layers[0]: expected an object"));
}

std::string IndexJson(const std::string& arch2) {
  return absl::StrCat(R"({"schemaVersion":2,"mediaType":")", kOciIndex, R"(","manifests":[
    {"mediaType":")",
                      kOciManifest, R"(","digest":")", kD1, R"(","size":10,
     "platform":{"os":"linux","architecture":"s390x"}},
    {"mediaType":")",
                      kOciManifest, R"(","digest":")", kD2, R"(","size":11},
    {"mediaType":")",
                      kOciManifest, R"(","digest":")", kD3, R"(","size":12,
     "platform":{"os":"linux","architecture":")",
                      arch2, R"(","variant":"v8"}}]})");
}

TEST(OciTypesTest, ParsesAnIndexAndSelectsThisMachinesManifest) {
  auto index = ParseIndex(IndexJson(HostArchitecture()));
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->manifests.size(), 3u);
  ASSERT_TRUE(index->manifests[0].platform.has_value());
  EXPECT_EQ(index->manifests[0].platform->architecture, "s390x");
  EXPECT_FALSE(index->manifests[1].platform.has_value());
  EXPECT_EQ(index->manifests[2].platform->variant, "v8");
  if (HostArchitecture() != "s390x") {
    auto d = SelectPlatform(*index);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->digest, kD3);
    EXPECT_EQ(d->size, 12);
  }
}

TEST(OciTypesTest, SelectPlatformListsWhatTheIndexHas) {
  auto index = ParseIndex(IndexJson("mips64le"));
  ASSERT_TRUE(index.ok()) << index.status();
  if (HostArchitecture() == "s390x" || HostArchitecture() == "mips64le") GTEST_SKIP();
  auto d = SelectPlatform(*index);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(d.status().message(), HasSubstr("linux/" + HostArchitecture()));
  EXPECT_THAT(d.status().message(), HasSubstr("linux/s390x, (no platform), linux/mips64le/v8"));
  EXPECT_EQ(SelectPlatform(Index{}).status().code(), absl::StatusCode::kNotFound);
}

TEST(OciTypesTest, IndexErrorsNameTheField) {
  const std::string good = IndexJson("amd64");
  struct Case {
    std::string json;
    std::string message;
  };
  const Case cases[] = {
      {absl::StrReplaceAll(good, {{R"("schemaVersion":2)", R"("schemaVersion":3)"}}),
       "index: schemaVersion: expected 2, got 3"},
      {absl::StrReplaceAll(good, {{kOciIndex, kOciManifest}}),
       "index: mediaType: expected an index type"},
      {absl::StrReplaceAll(good, {{kD2, "sha256:zz"}}),
       "index: manifests[1].digest: expected sha256:<64 hex>"},
      {absl::StrReplaceAll(good, {{R"("os":"linux","architecture":"s390x")", R"("os":"linux")"}}),
       "index: manifests[0].platform.architecture: required"},
      {absl::StrReplaceAll(good, {{R"("variant":"v8")", R"("variant":8)"}}),
       "index: manifests[2].platform.variant: expected a string, got number"},
      {absl::StrReplaceAll(good, {{R"("manifests":[)", R"("manifests":{"x":[)"}, {"]}", "]}}"}}),
       "index: manifests: expected an array, got object"},
  };
  for (const Case& c : cases) {
    auto index = ParseIndex(c.json);
    ASSERT_FALSE(index.ok()) << c.json;
    EXPECT_EQ(index.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(index.status().message(), HasSubstr(c.message)) << c.json;
  }
  // A Docker manifest list, and an index without mediaType, are indexes too.
  EXPECT_TRUE(ParseIndex(absl::StrReplaceAll(good, {{kOciIndex, kDockerManifestList}})).ok());
  EXPECT_TRUE(ParseIndex(R"({"schemaVersion":2,"manifests":[]})").ok());
}

std::string ConfigJson() {
  return absl::StrCat(R"({"architecture":"amd64","os":"linux","created":"2024-01-01T00:00:00Z",
    "config":{"Entrypoint":null,"Cmd":["/bin/sh","-c","echo hi"],"Env":["PATH=/bin","EMPTY="],
              "WorkingDir":"/work","User":"65534:65534","Labels":{"x":"y"}},
    "rootfs":{"type":"layers","diff_ids":[")",
                      kD1, R"(",")", kD2, R"("]},
    "history":[{"created_by":"test"}]})");
}

TEST(OciTypesTest, ParsesAnImageConfig) {
  auto c = ParseImageConfig(ConfigJson());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->entrypoint.empty());
  EXPECT_EQ(c->cmd, (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));
  EXPECT_EQ(c->env, (std::vector<std::string>{"PATH=/bin", "EMPTY="}));
  EXPECT_EQ(c->working_dir, "/work");
  EXPECT_EQ(c->user, "65534:65534");
  EXPECT_EQ(c->diff_ids, (std::vector<std::string>{kD1, kD2}));
  EXPECT_EQ(c->os, "linux");
  EXPECT_EQ(c->architecture, "amd64");

  // No "config" object at all: an image with nothing to run by default.
  auto bare = ParseImageConfig(absl::StrCat(
      R"({"architecture":"arm64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})"));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->cmd.empty());
  EXPECT_TRUE(bare->diff_ids.empty());
}

TEST(OciTypesTest, ImageConfigErrorsNameTheField) {
  const std::string good = ConfigJson();
  struct Case {
    std::string json;
    std::string message;
  };
  const Case cases[] = {
      {absl::StrReplaceAll(good, {{R"("os":"linux",)", ""}}), "config: os: required"},
      {absl::StrReplaceAll(good, {{R"("architecture":"amd64")", R"("architecture":1)"}}),
       "config: architecture: expected a string, got number"},
      {absl::StrReplaceAll(good, {{R"("Cmd":["/bin/sh")", R"("Cmd":[7)"}}),
       "config: config.Cmd[0]: expected a string, got number"},
      {absl::StrReplaceAll(good, {{R"("Entrypoint":null)", R"("Entrypoint":"/bin/sh")"}}),
       "config: config.Entrypoint: expected an array of strings, got string"},
      {absl::StrReplaceAll(good, {{R"("EMPTY=")", R"("NOEQUALS")"}}),
       "config: config.Env[1]: expected \"NAME=value\", got \"NOEQUALS\""},
      {absl::StrReplaceAll(good, {{R"("WorkingDir":"/work")", R"("WorkingDir":[])"}}),
       "config: config.WorkingDir: expected a string, got array"},
      {absl::StrReplaceAll(good, {{R"("type":"layers")", R"("type":"squashfs")"}}),
       "config: rootfs.type: expected \"layers\", got \"squashfs\""},
      {absl::StrReplaceAll(good, {{kD2, "sha256:nothex"}}),
       "config: rootfs.diff_ids[1]: expected sha256:<64 hex>"},
      {absl::StrReplaceAll(good, {{R"("diff_ids")", R"("diff_idz")"}}),
       "config: rootfs.diff_ids: required"},
      {absl::StrReplaceAll(good, {{R"("rootfs")", R"("rootfz")"}}), "config: rootfs: required"},
  };
  for (const Case& c : cases) {
    auto config = ParseImageConfig(c.json);
    ASSERT_FALSE(config.ok()) << c.json;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(OciTypesTest, MediaTypes) {
  EXPECT_TRUE(IsIndexMediaType(kOciIndex));
  EXPECT_TRUE(IsIndexMediaType(kDockerManifestList));
  EXPECT_FALSE(IsIndexMediaType(kOciManifest));
  EXPECT_TRUE(IsManifestMediaType(kOciManifest));
  EXPECT_TRUE(IsManifestMediaType(kDockerManifest));
  EXPECT_FALSE(IsManifestMediaType(kDockerManifestList));
  EXPECT_FALSE(IsManifestMediaType("application/json"));
}

TEST(OciTypesTest, HostArchitectureUsesTheOciSpelling) {
  std::string arch = HostArchitecture();
  EXPECT_NE(arch, "x86_64");
  EXPECT_NE(arch, "aarch64");
#if defined(__x86_64__)
  EXPECT_EQ(arch, "amd64");
#endif
}

}  // namespace
}  // namespace paceline::image
