#include "image/archive_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "image/digest.h"
#include "image/image_store.h"
#include "image/layer_stream.h"
#include "image/testing/image_builder.h"
#include "image/testing/tar_builder.h"

namespace paceline::image {
namespace {

namespace fs = std::filesystem;
using testing::Blob;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TarBuilder;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, absl::string_view content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// The uncompressed tar of a layer blob.
std::string Uncompressed(const std::string& scratch_file, const Blob& layer) {
  WriteAll(scratch_file, layer.data);
  absl::StatusOr<std::unique_ptr<internal::LayerStream>> stream =
      internal::LayerStream::Open(scratch_file);
  EXPECT_TRUE(stream.ok()) << stream.status();
  std::string out;
  char buf[1 << 16];
  while (true) {
    absl::StatusOr<size_t> n = (*stream)->Read(buf, sizeof(buf));
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok() || *n == 0) break;
    out.append(buf, *n);
  }
  fs::remove(scratch_file);
  return out;
}

// The directory as a tar (sorted, so that directories come before what they hold).
std::string TarOfDir(const std::string& dir, bool gzip = false) {
  std::vector<fs::path> paths;
  for (const auto& e : fs::recursive_directory_iterator(dir)) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  TarBuilder tar;
  for (const fs::path& p : paths) {
    std::string rel = p.lexically_relative(dir).string();
    if (fs::is_symlink(p)) {
      tar.Symlink(fs::read_symlink(p).string(), rel);
    } else if (fs::is_directory(p)) {
      tar.Dir(rel);
    } else {
      tar.File(rel, ReadAll(p.string()));
    }
  }
  return tar.Finish(gzip);
}

std::string IndexEntry(const Blob& b, absl::string_view name) {
  return absl::StrCat(R"({"mediaType":")", b.media_type, R"(","digest":")", b.digest,
                      R"(","size":)", b.data.size(),
                      R"(,"annotations":{"org.opencontainers.image.ref.name":")", name, R"("}})");
}

std::string IndexJson(const std::vector<std::string>& entries) {
  return absl::StrCat(R"({"schemaVersion":2,"manifests":[)", absl::StrJoin(entries, ","), "]}");
}

// A `docker save` image as files in `dir`: <config hex>.json, <id>/layer.tar (the uncompressed
// layers; one already written is a symlink to the first, as docker does), <id>/json,
// <id>/VERSION, repositories, manifest.json.
void WriteDockerSave(const testing::Image& image, const std::vector<std::string>& layer_tars,
                     absl::string_view tag, const std::string& dir) {
  const std::string config_file = absl::StrCat(DigestHex(image.config.digest), ".json");
  WriteAll(absl::StrCat(dir, "/", config_file), image.config.data);
  std::vector<std::string> layers;
  std::vector<std::string> ids;
  for (size_t i = 0; i < layer_tars.size(); ++i) {
    ids.push_back(DigestHex(Sha256Digest(absl::StrCat("v1 id ", i, image.config.digest))));
    const std::string layer_dir = absl::StrCat(dir, "/", ids[i]);
    fs::create_directories(layer_dir);
    auto first = std::find(layer_tars.begin(), layer_tars.end(), layer_tars[i]);
    if (first != layer_tars.begin() + static_cast<long>(i)) {
      fs::create_symlink(absl::StrCat("../", ids[first - layer_tars.begin()], "/layer.tar"),
                         layer_dir + "/layer.tar");
    } else {
      WriteAll(layer_dir + "/layer.tar", layer_tars[i]);
    }
    WriteAll(layer_dir + "/json", absl::StrCat(R"({"id":")", ids[i], R"("})"));
    WriteAll(layer_dir + "/VERSION", "1.0");
    layers.push_back(absl::StrCat("\"", ids[i], "/layer.tar\""));
  }
  WriteAll(dir + "/repositories", absl::StrCat(R"({"busybox":{"latest":")", ids.back(), "\"}}"));
  WriteAll(dir + "/manifest.json",
           absl::StrCat(R"([{"Config":")", config_file, R"(","RepoTags":[")", tag,
                        R"("],"Layers":[)", absl::StrJoin(layers, ","), "]}]"));
}

class ArchiveSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    base_ = absl::StrCat(::testing::TempDir(), "/archive-source-", ::getpid(), "-", test);
    fs::remove_all(base_);
    fs::create_directories(base_);
    scratch_ = base_ + "/scratch";
    ImageStoreOptions options;
    options.dir = base_ + "/store";
    absl::StatusOr<std::unique_ptr<ImageStore>> store = ImageStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<testing::Image> busybox = testing::BusyboxImage();
    if (!busybox.ok()) GTEST_SKIP() << busybox.status();
    busybox_ = *std::move(busybox);
  }
  void TearDown() override {
    // Whatever happened, a source's extraction is gone with it.
    EXPECT_TRUE(!fs::exists(scratch_) || fs::is_empty(scratch_));
    fs::remove_all(base_);
  }

  absl::StatusOr<std::unique_ptr<ArchiveSource>> Open(const std::string& path,
                                                      const std::string& name = "",
                                                      const ArchiveLimits& limits = {}) {
    return ArchiveSource::Open(path, scratch_, name, limits);
  }

  // Opens `path` and pulls its image into the store.
  absl::StatusOr<CachedImage> Load(const std::string& path, const std::string& name = "") {
    ASSIGN_OR_RETURN(std::unique_ptr<ArchiveSource> source, Open(path, name));
    return store_->Pull("example.com/busybox:latest", *source);
  }

  void ExpectBusybox(const absl::StatusOr<CachedImage>& image) {
    ASSERT_TRUE(image.ok()) << image.status();
    EXPECT_TRUE(fs::is_regular_file(image->rootfs + "/bin/busybox"));
    EXPECT_EQ(ReadAll(image->rootfs + "/bin/busybox"), ReadAll("/bin/busybox"));
    EXPECT_TRUE(fs::is_symlink(image->rootfs + "/bin/sh"));
    EXPECT_EQ(image->config_digest, busybox_.config.digest);
  }

  void ExpectNothingCommitted() {
    EXPECT_TRUE(store_->List().empty());
    EXPECT_TRUE(fs::is_empty(base_ + "/store/tmp"));
    EXPECT_TRUE(fs::is_empty(base_ + "/store/rootfs"));
  }

  std::string Layout(absl::string_view ref_name = "busybox:1.36") {
    const std::string dir = base_ + "/layout";
    EXPECT_TRUE(testing::WriteOciLayout(busybox_, dir, ref_name).ok());
    return dir;
  }

  std::string BlobPath(const std::string& layout, const Blob& blob) {
    return absl::StrCat(layout, "/blobs/sha256/", DigestHex(blob.digest));
  }

  std::string DockerSaveTar(absl::string_view tag = "busybox:latest") {
    const std::string layer = Uncompressed(base_ + "/layer.gz", busybox_.layers[0]);
    WriteDockerSave(busybox_, {layer}, tag, base_ + "/docker");
    const std::string tar = base_ + "/docker.tar";
    WriteAll(tar, TarOfDir(base_ + "/docker"));
    return tar;
  }

  std::string base_;
  std::string scratch_;
  std::unique_ptr<ImageStore> store_;
  testing::Image busybox_;
};

TEST_F(ArchiveSourceTest, OciLayoutDirectory) {
  const std::string layout = Layout();
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(layout);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT((*source)->Names(), ElementsAre("busybox:1.36"));
  absl::StatusOr<CachedImage> image = store_->Pull("example.com/busybox:1.36", **source);
  ExpectBusybox(image);
  EXPECT_EQ(image->manifest_digest, busybox_.manifest.digest);
  EXPECT_FALSE(fs::exists(scratch_));  // a directory is read where it is

  // By name, as written or in canonical form.
  EXPECT_TRUE(Open(layout, "busybox:1.36").ok());
  EXPECT_TRUE(Open(layout, "docker.io/library/busybox:1.36").ok());
  absl::StatusOr<std::unique_ptr<ArchiveSource>> missing = Open(layout, "busybox:1.37");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("busybox:1.36"));
}

TEST_F(ArchiveSourceTest, OciLayoutTar) {
  const std::string tar = base_ + "/busybox.tar";
  WriteAll(tar, testing::OciLayoutTar(busybox_, "busybox:1.36"));
  {
    absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(tar);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_THAT((*source)->Names(), ElementsAre("busybox:1.36"));
    EXPECT_FALSE(fs::is_empty(scratch_));
    ExpectBusybox(store_->Pull("example.com/busybox:1.36", **source));
  }
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(ArchiveSourceTest, GzippedTarWithDotSlashAndOtherEntriesKeepsOnlyImageFiles) {
  const std::string layout = Layout();
  TarBuilder tar;
  tar.Dir("./").File("./oci-layout", ReadAll(layout + "/oci-layout"));
  tar.File("./index.json", ReadAll(layout + "/index.json")).Dir("./blobs").Dir("./blobs/sha256");
  std::vector<const Blob*> blobs = busybox_.blobs();
  blobs.push_back(&busybox_.manifest);
  for (const Blob* b : blobs) tar.File("./blobs/sha256/" + DigestHex(b->digest), b->data);
  tar.File("./README", "hello").File("./blobs/sha256/short", "x").Fifo("./fifo");
  tar.Symlink("/etc/passwd", "./passwd").Dir("./" + std::string(64, 'a'));
  WriteAll(base_ + "/busybox.tar.gz", tar.Finish(/*gzip=*/true));

  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(base_ + "/busybox.tar.gz");
  ASSERT_TRUE(source.ok()) << source.status();
  std::vector<std::string> extracted;
  for (const auto& e : fs::recursive_directory_iterator(scratch_)) {
    if (!e.is_directory()) extracted.push_back(fs::relative(e.path(), scratch_).string());
  }
  EXPECT_EQ(extracted.size(), 5u) << absl::StrJoin(extracted, " ");
  for (const std::string& f : extracted) {
    EXPECT_THAT(f, ::testing::Not(HasSubstr("README")));
    EXPECT_THAT(f, ::testing::Not(HasSubstr("short")));
  }
  ExpectBusybox(store_->Pull("example.com/busybox:1.36", **source));
}

TEST_F(ArchiveSourceTest, DockerSaveTarball) {
  const std::string tar = DockerSaveTar();
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(tar);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT((*source)->Names(), ElementsAre("busybox:latest"));
  absl::StatusOr<FetchedManifest> manifest = (*source)->Manifest();
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->digest, Sha256Digest(manifest->body));
  EXPECT_THAT(manifest->body, HasSubstr(std::string(kOciLayerTar)));
  ExpectBusybox(store_->Pull("docker.io/library/busybox:latest", **source));

  EXPECT_TRUE(Open(tar, "docker.io/library/busybox:latest").ok());
  EXPECT_EQ(Open(tar, "alpine").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ArchiveSourceTest, DockerSaveWithRepeatedLayerAsSymlinkInTarAndDirectory) {
  TarBuilder layer_tar;
  layer_tar.Dir("app").File("app/hello.txt", "hi\n");
  const std::string layer = layer_tar.Finish(false);
  testing::Image image = testing::ImageBuilder().Layer(layer).Layer(layer).Build();
  WriteDockerSave(image, {layer, layer}, "app:1", base_ + "/docker");
  int symlinks = 0;
  for (const auto& e : fs::recursive_directory_iterator(base_ + "/docker")) {
    symlinks += e.is_symlink() ? 1 : 0;
  }
  ASSERT_EQ(symlinks, 1);
  WriteAll(base_ + "/app.tar", TarOfDir(base_ + "/docker"));
  for (const std::string& path : {base_ + "/app.tar", base_ + "/docker"}) {
    absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(path);
    ASSERT_TRUE(source.ok()) << path << ": " << source.status();
    absl::StatusOr<CachedImage> pulled = store_->Pull("example.com/app:1", **source);
    ASSERT_TRUE(pulled.ok()) << path << ": " << pulled.status();
    EXPECT_EQ(ReadAll(pulled->rootfs + "/app/hello.txt"), "hi\n");
  }
}

TEST_F(ArchiveSourceTest, TamperedLayerInLayoutIsDataLossAndNothingIsCommitted) {
  const std::string layout = Layout();
  const std::string blob = BlobPath(layout, busybox_.layers[0]);
  std::string data = ReadAll(blob);
  data[data.size() / 2] ^= 1;
  WriteAll(blob, data);
  absl::StatusOr<CachedImage> image = Load(layout);
  EXPECT_EQ(image.status().code(), absl::StatusCode::kDataLoss) << image.status();
  EXPECT_THAT(image.status().message(), HasSubstr(busybox_.layers[0].digest));
  ExpectNothingCommitted();

  // The same layout as a tar (extracted files are hard-linked, then hashed).
  WriteAll(base_ + "/tampered.tar", TarOfDir(layout));
  image = Load(base_ + "/tampered.tar");
  EXPECT_EQ(image.status().code(), absl::StatusCode::kDataLoss) << image.status();
  ExpectNothingCommitted();
}

TEST_F(ArchiveSourceTest, TamperedDockerSaveIsDataLoss) {
  const std::string layer = Uncompressed(base_ + "/layer.gz", busybox_.layers[0]);
  WriteDockerSave(busybox_, {layer}, "busybox:latest", base_ + "/docker");
  const std::string layer_file = absl::StrCat(
      base_, "/docker/", DigestHex(Sha256Digest(absl::StrCat("v1 id 0", busybox_.config.digest))),
      "/layer.tar");
  std::string data = ReadAll(layer_file);
  data[data.size() / 2] ^= 1;
  WriteAll(layer_file, data);
  absl::StatusOr<CachedImage> image = Load(base_ + "/docker");
  EXPECT_EQ(image.status().code(), absl::StatusCode::kDataLoss) << image.status();
  ExpectNothingCommitted();

  // A config whose content is not the digest its name promises.
  WriteAll(layer_file, layer);
  const std::string config_file =
      absl::StrCat(base_, "/docker/", DigestHex(busybox_.config.digest), ".json");
  WriteAll(config_file, ReadAll(config_file) + " ");
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(base_ + "/docker");
  EXPECT_EQ(source.status().code(), absl::StatusCode::kDataLoss) << source.status();
  EXPECT_THAT(source.status().message(), HasSubstr(".json"));
}

TEST_F(ArchiveSourceTest, FetchBlobLeavesNothingAtPathOnError) {
  WriteAll(base_ + "/busybox.tar", testing::OciLayoutTar(busybox_));
  for (const std::string& path : {Layout(), base_ + "/busybox.tar"}) {
    absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(path);
    ASSERT_TRUE(source.ok()) << source.status();
    const std::string out = base_ + "/out";
    Descriptor config = busybox_.config.descriptor();
    ASSERT_TRUE((*source)->FetchBlob(config, out).ok());
    EXPECT_EQ(ReadAll(out), busybox_.config.data);
    fs::remove(out);

    Descriptor bigger = config;
    bigger.size += 1;
    EXPECT_EQ((*source)->FetchBlob(bigger, out).code(), absl::StatusCode::kDataLoss);
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".partial"));

    Descriptor wrong = busybox_.config.descriptor();
    wrong.digest = Sha256Digest("something else");
    absl::Status status = (*source)->FetchBlob(wrong, out);
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;  // no such blob file
    EXPECT_FALSE(fs::exists(out));
  }
  // A layout blob whose content does not hash to its name.
  const std::string layout = base_ + "/layout";
  WriteAll(BlobPath(layout, busybox_.config), busybox_.config.data.substr(1) + "X");
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(layout);
  ASSERT_TRUE(source.ok());
  absl::Status status = (*source)->FetchBlob(busybox_.config.descriptor(), base_ + "/out");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_FALSE(fs::exists(base_ + "/out"));
  EXPECT_FALSE(fs::exists(base_ + "/out.partial"));
}

TEST_F(ArchiveSourceTest, TarWithEntriesOutsideIsRefusedAndWritesNothing) {
  for (const std::string& evil :
       {std::string("../evil"), std::string("./blobs/../../evil"), base_ + "/abs-evil"}) {
    TarBuilder tar;
    tar.File("oci-layout", R"({"imageLayoutVersion":"1.0.0"})").File(evil, "pwned");
    WriteAll(base_ + "/evil.tar", tar.Finish(false));
    absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(base_ + "/evil.tar");
    EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument) << source.status();
    EXPECT_THAT(source.status().message(), HasSubstr(evil));
    EXPECT_FALSE(fs::exists(base_ + "/evil"));
    EXPECT_FALSE(fs::exists(base_ + "/abs-evil"));
    EXPECT_FALSE(fs::exists(scratch_ + "/evil"));
    EXPECT_TRUE(fs::is_empty(scratch_));
  }
}

TEST_F(ArchiveSourceTest, MissingBlobIsNotFound) {
  const std::string layout = Layout();
  fs::remove(BlobPath(layout, busybox_.layers[0]));
  absl::StatusOr<CachedImage> image = Load(layout);
  EXPECT_EQ(image.status().code(), absl::StatusCode::kNotFound) << image.status();
  EXPECT_THAT(image.status().message(), HasSubstr(DigestHex(busybox_.layers[0].digest)));
  ExpectNothingCommitted();

  fs::remove(BlobPath(layout, busybox_.manifest));
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(layout);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->Manifest().status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ArchiveSourceTest, TwoImagesNeedAName) {
  TarBuilder extra;
  extra.Dir("opt").File("opt/b.txt", "b\n");
  testing::Image b = testing::ImageBuilder().Layer(extra.Finish(false)).Build();
  const std::string layout = base_ + "/layout";
  ASSERT_TRUE(testing::WriteOciLayout(b, layout, "b").ok());
  ASSERT_TRUE(testing::WriteOciLayout(busybox_, layout, "a").ok());
  WriteAll(layout + "/index.json",
           IndexJson({IndexEntry(busybox_.manifest, "a"), IndexEntry(b.manifest, "b")}));

  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(layout);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument) << source.status();
  EXPECT_THAT(source.status().message(), HasSubstr("a, b"));

  source = Open(layout, "b");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT((*source)->Names(), ElementsAre("b"));
  absl::StatusOr<CachedImage> image = store_->Pull("example.com/b:1", **source);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(ReadAll(image->rootfs + "/opt/b.txt"), "b\n");
  ExpectBusybox(Load(layout, "a"));

  // Two names of one image are one image.
  WriteAll(layout + "/index.json", IndexJson({IndexEntry(busybox_.manifest, "a"),
                                              IndexEntry(busybox_.manifest, "latest")}));
  source = Open(layout);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT((*source)->Names(), ElementsAre("a", "latest"));
}

TEST_F(ArchiveSourceTest, NestedIndexIsResolvedForThisMachine) {
  testing::Image other = testing::ImageBuilder().Architecture("other-arch").Build();
  Blob index = testing::MakeIndex({{other.manifest, Platform{"linux", "other-arch", ""}},
                                   {busybox_.manifest, Platform{"linux", HostArchitecture(), ""}}});
  const std::string layout = Layout();
  WriteAll(BlobPath(layout, index), index.data);
  WriteAll(BlobPath(layout, other.manifest), other.manifest.data);
  WriteAll(layout + "/index.json", IndexJson({IndexEntry(index, "multi")}));
  absl::StatusOr<std::unique_ptr<ArchiveSource>> source = Open(layout);
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<FetchedManifest> manifest = (*source)->Manifest();
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->digest, busybox_.manifest.digest);
  ExpectBusybox(store_->Pull("example.com/multi:1", **source));

  // An index blob that is not what index.json says.
  WriteAll(BlobPath(layout, index), index.data + " ");
  source = Open(layout);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->Manifest().status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ArchiveSourceTest, MalformedDocumentsNameTheField) {
  const std::string layout = Layout();
  WriteAll(layout + "/index.json",
           R"({"schemaVersion":2,"manifests":[{"mediaType":"x","digest":5,"size":1}]})");
  absl::Status status = Open(layout).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("index.json"));
  EXPECT_THAT(status.message(), HasSubstr("manifests[0].digest"));

  WriteAll(layout + "/index.json", "{not json");
  EXPECT_EQ(Open(layout).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string docker = base_ + "/docker";
  WriteAll(docker + "/manifest.json", R"([{"Config":"x.json","RepoTags":null,"Layers":"a"}])");
  status = Open(docker).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("[0].Layers"));
  WriteAll(docker + "/manifest.json", R"([{"Config":"../../etc/passwd","Layers":[]}])");
  status = Open(docker).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("[0].Config"));

  WriteAll(base_ + "/empty/README", "nothing here");
  EXPECT_EQ(Open(base_ + "/empty").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Open(base_ + "/nonexistent").status().code(), absl::StatusCode::kNotFound);
  WriteAll(base_ + "/garbage.tar", std::string(5000, 'g'));
  EXPECT_EQ(Open(base_ + "/garbage.tar").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ArchiveSourceTest, TarLimitsAndTruncation) {
  const std::string tar = testing::OciLayoutTar(busybox_);
  WriteAll(base_ + "/busybox.tar", tar);
  ArchiveLimits small_files;
  small_files.max_file_bytes = 100000;
  absl::Status status = Open(base_ + "/busybox.tar", "", small_files).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(DigestHex(busybox_.layers[0].digest)));

  ArchiveLimits few_files;
  few_files.max_files = 3;
  EXPECT_EQ(Open(base_ + "/busybox.tar", "", few_files).status().code(),
            absl::StatusCode::kInvalidArgument);

  WriteAll(base_ + "/cut.tar", tar.substr(0, tar.size() / 2));
  status = Open(base_ + "/cut.tar").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
}

}  // namespace
}  // namespace paceline::image
