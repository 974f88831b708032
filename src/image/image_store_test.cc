// The image cache (image_store.h): tags, sharing, pins, the size limit and its LRU order,
// reopening, and a store that another process changed.
#include "image/image_store.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "image/archive_source.h"
#include "image/testing/image_builder.h"
#include "image/testing/tar_builder.h"

namespace paceline::image {
namespace {

namespace fs = std::filesystem;
using testing::ImageBuilder;
using testing::TarBuilder;

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/image-store-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ImageStore> Open(int64_t limit = int64_t{1} << 40) {
    auto store = ImageStore::Open({.dir = dir_ + "/store", .size_limit_bytes = limit});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  // An image of one file of `size` bytes, written as an OCI layout.
  std::string Layout(const std::string& name, size_t size) {
    testing::Image image =
        ImageBuilder().Layer(TarBuilder().File(name, std::string(size, 'x')).Finish(false)).Build();
    std::string layout = absl::StrCat(dir_, "/layout-", name);
    EXPECT_TRUE(testing::WriteOciLayout(image, layout).ok());
    return layout;
  }
  absl::StatusOr<CachedImage> Pull(ImageStore& store, const std::string& ref,
                                   const std::string& layout) {
    auto source = ArchiveSource::Open(layout, dir_ + "/scratch", "");
    if (!source.ok()) return source.status();
    return store.Pull(ref, **source);
  }

  std::string dir_;
};

TEST_F(ImageStoreTest, TwoTagsOfOneImageShareItsTreeAndATagMoves) {
  auto store = Open();
  std::string a = Layout("a", 100), b = Layout("b", 100);
  auto first = Pull(*store, "r.io/app:1", a);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(fs::exists(first->rootfs + "/a"));
  auto second = Pull(*store, "r.io/app:latest", a);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->config_digest, first->config_digest);
  EXPECT_THAT(second->refs, ::testing::ElementsAre("r.io/app:1", "r.io/app:latest"));
  // The tag moves to another image; the first keeps its other tag.
  auto moved = Pull(*store, "r.io/app:latest", b);
  ASSERT_TRUE(moved.ok());
  EXPECT_NE(moved->config_digest, first->config_digest);
  EXPECT_EQ(store->Lookup("r.io/app:latest")->config_digest, moved->config_digest);
  EXPECT_EQ(store->Lookup("r.io/app:1")->config_digest, first->config_digest);
  EXPECT_EQ(store->List().size(), 2u);
  EXPECT_TRUE(fs::is_empty(dir_ + "/store/tmp"));
}

TEST_F(ImageStoreTest, BeyondTheLimitUnpinnedImagesGoLeastRecentlyUsedFirst) {
  auto store = Open(/*limit=*/2500);
  auto a = Pull(*store, "r.io/a:1", Layout("a", 1000));
  auto b = Pull(*store, "r.io/b:1", Layout("b", 1000));
  auto c = Pull(*store, "r.io/c:1", Layout("c", 1000));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(store->TotalBytes(), 3000);
  // a is in use; b was used after c.
  ASSERT_TRUE(store->Pin(a->config_digest, absl::Now()).ok());
  ASSERT_TRUE(store->Pin(b->config_digest, absl::Now() + absl::Hours(1)).ok());
  store->Unpin(b->config_digest);
  EXPECT_EQ(store->CollectGarbage(), 1);
  EXPECT_FALSE(store->Lookup("r.io/c:1").has_value());
  EXPECT_FALSE(fs::exists(c->rootfs));
  EXPECT_TRUE(store->Lookup("r.io/a:1").has_value());
  EXPECT_TRUE(store->Lookup("r.io/b:1").has_value());
  EXPECT_EQ(store->CollectGarbage(), 0);  // within the limit now
  // A pinned image is never collected, however far above the limit.
  auto tight = Open(/*limit=*/0);
  ASSERT_TRUE(tight->Pin(a->config_digest, absl::Now()).ok());
  EXPECT_EQ(tight->CollectGarbage(), 1);  // b only
  EXPECT_TRUE(tight->Lookup("r.io/a:1").has_value());
  EXPECT_FALSE(tight->Lookup("r.io/b:1").has_value());
}

TEST_F(ImageStoreTest, AReopenedStoreKnowsItsImagesAndForgetsCrashLeftovers) {
  {
    auto store = Open();
    ASSERT_TRUE(Pull(*store, "r.io/a:1", Layout("a", 10)).ok());
  }
  fs::create_directories(dir_ + "/store/tmp/pull-crashed/rootfs");
  auto store = Open();
  EXPECT_TRUE(store->Lookup("r.io/a:1").has_value());
  EXPECT_TRUE(fs::is_empty(dir_ + "/store/tmp"));
  EXPECT_EQ(store->Pin("sha256:" + std::string(64, '0'), absl::Now()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ImageStoreTest, AnImageAnotherProcessLoadedIsFound) {
  auto agent = Open();
  auto loader = Open();  // `paceline image load` on the same directory
  ASSERT_TRUE(Pull(*loader, "r.io/loaded:1", Layout("l", 10)).ok());
  EXPECT_TRUE(agent->Lookup("r.io/loaded:1").has_value());
}

TEST_F(ImageStoreTest, ABadIndexFileIsDataLossNamingIt) {
  fs::create_directories(dir_ + "/store");
  std::ofstream(dir_ + "/store/index.json") << "not json";
  auto store = ImageStore::Open({.dir = dir_ + "/store"});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("index.json"));
}

}  // namespace
}  // namespace paceline::image
