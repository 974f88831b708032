#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "image/digest.h"
#include "image/testing/tar_builder.h"

namespace paceline::image {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TarBuilder;

std::string Gzip(absl::string_view data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// `data` compressed with zstd by libarchive (its "raw" format writes the bytes as they are).
std::string Zstd(absl::string_view data) {
  std::string out(data.size() + 4096, '\0');
  size_t used = 0;
  archive* a = archive_write_new();
  EXPECT_EQ(archive_write_set_format_raw(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_add_filter_zstd(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "data");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
  EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK);
  EXPECT_EQ(archive_write_data(a, data.data(), data.size()), static_cast<la_ssize_t>(data.size()));
  archive_entry_free(e);
  EXPECT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  out.resize(used);
  return out;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct stat Lstat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

const bool kRoot = ::geteuid() == 0;

// Each test gets a directory `base_` holding the rootfs, the layers, and a sentinel file that
// no layer may touch; after each test nothing else may be in `base_`.
class LayerUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '_');
    base_ = absl::StrCat(::testing::TempDir(), "/layer-unpack-", ::getpid(), "-", test);
    fs::remove_all(base_);
    fs::create_directories(base_ + "/rootfs");
    fs::create_directories(base_ + "/layers");
    rootfs_ = base_ + "/rootfs";
    std::ofstream(base_ + "/sentinel") << kSentinel;
  }
  void TearDown() override {
    ExpectNothingOutside();
    fs::remove_all(base_);
  }

  absl::Status Apply(const std::string& layer, const std::string& diff_id = "",
                     UnpackStats* stats = nullptr) {
    const std::string path = absl::StrCat(base_, "/layers/", layers_++);
    std::ofstream(path, std::ios::binary) << layer;
    return ApplyLayer(path, rootfs_, diff_id, stats);
  }

  // Applies `layer` in a child process chrooted into base_ (as root), so that anything that
  // escaped the rootfs would land in base_, where ExpectNothingOutside sees it, and never on
  // this machine's own files.
  absl::StatusCode ApplyJailed(const std::string& layer) {
    const std::string name = absl::StrCat("jailed", layers_++);
    std::ofstream(absl::StrCat(base_, "/layers/", name), std::ios::binary) << layer;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chroot(base_.c_str()) != 0 || ::chdir("/") != 0) ::_exit(100);
      absl::Status s = ApplyLayer("/layers/" + name, "/rootfs", "", nullptr);
      if (!s.ok()) std::fprintf(stderr, "jailed: %s\n", s.ToString().c_str());
      ::_exit(static_cast<int>(s.code()));
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_NE(WEXITSTATUS(status), 100) << "chroot failed";
    return static_cast<absl::StatusCode>(WEXITSTATUS(status));
  }

  void ExpectNothingOutside() {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(base_)) names.insert(e.path().filename());
    EXPECT_EQ(names, (std::set<std::string>{"layers", "rootfs", "sentinel"}));
    for (const auto& e : fs::directory_iterator(base_ + "/layers")) {
      EXPECT_TRUE(e.is_regular_file() && !e.is_symlink()) << e.path();
    }
    EXPECT_EQ(ReadAll(base_ + "/sentinel"), kSentinel);
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(rootfs_)));
  }

  std::string R(absl::string_view path) const { return absl::StrCat(rootfs_, "/", path); }

  static constexpr char kSentinel[] = "the sentinel\n";
  std::string base_;
  std::string rootfs_;
  int layers_ = 0;
};

// The tests that hold for a layer with and without gzip.
class LayerUnpackFormatTest : public LayerUnpackTest, public ::testing::WithParamInterface<bool> {
 protected:
  std::string Build(TarBuilder& t) { return t.Finish(/*gzip=*/GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Gzip, LayerUnpackFormatTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "gzip" : "tar"; });

TEST_P(LayerUnpackFormatTest, FilesDirectoriesModesOwnersTimes) {
  TarBuilder t;
  t.Dir("bin", 0755)
      .File("bin/hello", "#!/bin/sh\necho hi\n", 0755)
      .File("bin/su", "su", 04755)
      .File("bin/wall", "wall", 02755, 0, 5)
      .Dir("tmp", 01777)
      .Dir("home/user", 0700, 1000, 1000)
      .File("home/user/notes", "mine", 0600, 1000, 1000)
      .Dir("ro", 0555)
      .File("ro/file", "in a read-only directory", 0444)
      .File("deep/er/file", "parents made", 0640);
  UnpackStats stats;
  ASSERT_TRUE(Apply(Build(t), "", &stats).ok());

  EXPECT_EQ(ReadAll(R("bin/hello")), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(Lstat(R("bin/hello")).st_mode, S_IFREG | 0755);
  EXPECT_EQ(Lstat(R("bin/su")).st_mode, S_IFREG | 04755);
  EXPECT_EQ(Lstat(R("bin/wall")).st_mode, S_IFREG | 02755);
  EXPECT_EQ(Lstat(R("tmp")).st_mode, S_IFDIR | 01777);
  EXPECT_EQ(Lstat(R("home/user")).st_mode, S_IFDIR | 0700);
  EXPECT_EQ(Lstat(R("ro")).st_mode, S_IFDIR | 0555);
  EXPECT_EQ(ReadAll(R("ro/file")), "in a read-only directory");
  EXPECT_EQ(Lstat(R("deep")).st_mode, S_IFDIR | 0755);  // not in the layer
  EXPECT_EQ(Lstat(R("deep/er/file")).st_mode, S_IFREG | 0640);
  if (kRoot) {
    EXPECT_EQ(Lstat(R("home/user/notes")).st_uid, 1000u);
    EXPECT_EQ(Lstat(R("home/user")).st_gid, 1000u);
    EXPECT_EQ(Lstat(R("bin/wall")).st_gid, 5u);
  }
  for (const char* p : {"bin", "bin/hello", "tmp", "ro", "ro/file", "home/user/notes"}) {
    EXPECT_EQ(Lstat(R(p)).st_mtim.tv_sec, TarBuilder::kMtime) << p;
  }
  EXPECT_EQ(stats.entries, 10);
  EXPECT_EQ(stats.bytes, 18 + 2 + 4 + 4 + 24 + 12);
  EXPECT_EQ(stats.whiteouts, 0);
}

TEST_P(LayerUnpackFormatTest, LongAndNonAsciiNames) {
  const std::string long_dir(150, 'd');
  const std::string long_name = long_dir + "/" + std::string(200, 'f');
  const std::string long_target(300, 't');
  TarBuilder t;
  t.File(long_name, "long")
      .File("caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac", "utf-8")
      .File("latin1-\xe9", "raw byte")
      .Symlink(long_target, "long-link")
      .File("setuid-user", "u", 04755, 1000, 1000);
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(ReadAll(R(long_name)), "long");
  EXPECT_EQ(ReadAll(R("caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac")), "utf-8");
  EXPECT_EQ(ReadAll(R("latin1-\xe9")), "raw byte");
  EXPECT_EQ(fs::read_symlink(R("long-link")), long_target);
  EXPECT_EQ(Lstat(R("setuid-user")).st_mode, S_IFREG | 04755);
}

TEST_P(LayerUnpackFormatTest, SymlinksAreWrittenAsTheyAre) {
  TarBuilder t;
  t.Symlink("/etc/passwd", "abs")
      .Symlink("../../../../..", "up")
      .Symlink("bin/hello", "rel")
      .Symlink("/", "root");
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(fs::read_symlink(R("abs")), "/etc/passwd");
  EXPECT_EQ(fs::read_symlink(R("up")), "../../../../..");
  EXPECT_EQ(fs::read_symlink(R("rel")), "bin/hello");
  EXPECT_EQ(fs::read_symlink(R("root")), "/");
  EXPECT_EQ(Lstat(R("abs")).st_mtim.tv_sec, TarBuilder::kMtime);
}

TEST_P(LayerUnpackFormatTest, HardLinksWithinALayerAndToALowerOne) {
  TarBuilder lower;
  lower.File("lib/libc.so", "libc", 0755);
  ASSERT_TRUE(Apply(Build(lower)).ok());
  TarBuilder t;
  t.File("a", "shared").Hardlink("a", "b").Hardlink("lib/libc.so", "libc-again");
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(Lstat(R("a")).st_ino, Lstat(R("b")).st_ino);
  EXPECT_EQ(Lstat(R("a")).st_nlink, 2u);
  EXPECT_EQ(ReadAll(R("b")), "shared");
  EXPECT_EQ(Lstat(R("lib/libc.so")).st_ino, Lstat(R("libc-again")).st_ino);
}

TEST_P(LayerUnpackFormatTest, WhiteoutsRemoveFilesAndDirectoriesOfLowerLayers) {
  TarBuilder lower;
  lower.File("etc/gone", "x")
      .File("etc/kept", "y")
      .Dir("opt/app", 0755)
      .File("opt/app/bin/tool", "t")
      .Symlink("/nowhere", "opt/link");
  ASSERT_TRUE(Apply(Build(lower)).ok());
  TarBuilder t;
  t.Whiteout("etc/gone").Whiteout("opt/app").Whiteout("opt/link").Whiteout("not/there");
  UnpackStats stats;
  ASSERT_TRUE(Apply(Build(t), "", &stats).ok());
  EXPECT_FALSE(Exists(R("etc/gone")));
  EXPECT_FALSE(Exists(R("opt/app")));
  EXPECT_FALSE(Exists(R("opt/link")));
  EXPECT_FALSE(Exists(R("not")));
  EXPECT_EQ(ReadAll(R("etc/kept")), "y");
  EXPECT_FALSE(Exists(R("etc/.wh.gone")));
  EXPECT_EQ(stats.whiteouts, 4);
}

TEST_P(LayerUnpackFormatTest, OpaqueDirectoryHidesOnlyLowerLayers) {
  TarBuilder lower;
  lower.File("d/old", "o").File("d/sub/old", "o").File("d/sub/older/x", "o").File("other", "o");
  ASSERT_TRUE(Apply(Build(lower)).ok());
  // The marker after this layer's own entries: those stay.
  TarBuilder t;
  t.Dir("d", 0750).File("d/new", "n").File("d/sub/new", "n").OpaqueDir("d");
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(ReadAll(R("d/new")), "n");
  EXPECT_EQ(ReadAll(R("d/sub/new")), "n");
  EXPECT_FALSE(Exists(R("d/old")));
  EXPECT_FALSE(Exists(R("d/sub/old")));
  EXPECT_FALSE(Exists(R("d/sub/older")));
  EXPECT_FALSE(Exists(R("d/.wh..wh..opq")));
  EXPECT_EQ(Lstat(R("d")).st_mode, S_IFDIR | 0750);
  EXPECT_EQ(ReadAll(R("other")), "o");
  // The usual order: the marker first.
  TarBuilder again;
  again.OpaqueDir("d").File("d/newest", "n");
  ASSERT_TRUE(Apply(Build(again)).ok());
  EXPECT_EQ(ReadAll(R("d/newest")), "n");
  EXPECT_FALSE(Exists(R("d/new")));
  EXPECT_FALSE(Exists(R("d/sub")));
}

TEST_P(LayerUnpackFormatTest, WhiteoutDoesNotHideItsOwnLayer) {
  TarBuilder t;
  t.File("f", "mine").Whiteout("f");
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(ReadAll(R("f")), "mine");
}

TEST_P(LayerUnpackFormatTest, EntriesReplaceWhatIsThere) {
  TarBuilder lower;
  lower.File("was-dir/inner/file", "x")
      .File("was-file", "x")
      .Symlink("../sentinel", "was-link")
      .Symlink("/", "was-link-dir");
  ASSERT_TRUE(Apply(Build(lower)).ok());
  TarBuilder t;
  t.File("was-dir", "now a file")
      .Dir("was-file", 0711)
      .File("was-file/inside", "i")
      .File("was-link", "not through the link")
      .Dir("was-link-dir", 0755);
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(ReadAll(R("was-dir")), "now a file");
  EXPECT_EQ(Lstat(R("was-file")).st_mode, S_IFDIR | 0711);
  EXPECT_EQ(ReadAll(R("was-file/inside")), "i");
  EXPECT_TRUE(S_ISREG(Lstat(R("was-link")).st_mode));
  EXPECT_EQ(ReadAll(R("was-link")), "not through the link");
  EXPECT_TRUE(S_ISDIR(Lstat(R("was-link-dir")).st_mode));
}

TEST_P(LayerUnpackFormatTest, FifoIsMadeDevicesAreSkipped) {
  TarBuilder t;
  t.Fifo("run/pipe", 0620).Device("dev/null", 'c', 1, 3).Device("dev/sda", 'b', 8, 0);
  UnpackStats stats;
  ASSERT_TRUE(Apply(Build(t), "", &stats).ok());
  EXPECT_EQ(Lstat(R("run/pipe")).st_mode, S_IFIFO | 0620);
  EXPECT_FALSE(Exists(R("dev/null")));
  EXPECT_FALSE(Exists(R("dev/sda")));
  EXPECT_EQ(stats.entries, 3);
}

TEST_P(LayerUnpackFormatTest, ParentsResolveThroughSymlinksInsideTheRootfs) {
  TarBuilder t;
  t.Dir("usr/lib", 0755)
      .Symlink("usr/lib", "lib")
      .Symlink("/usr", "abs-usr")
      .File("lib/a", "a")
      .File("abs-usr/lib/b", "b");
  ASSERT_TRUE(Apply(Build(t)).ok());
  EXPECT_EQ(ReadAll(R("usr/lib/a")), "a");
  EXPECT_EQ(ReadAll(R("usr/lib/b")), "b");
  EXPECT_EQ(fs::read_symlink(R("lib")), "usr/lib");
}

TEST_P(LayerUnpackFormatTest, RefusesNamesOutsideTheRootfs) {
  for (const char* name : {"../x", "/abs", "a/../../x", "a/..", "./../x"}) {
    TarBuilder t;
    t.File(name, "escape");
    absl::Status s = Apply(Build(t));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(name));
  }
  EXPECT_FALSE(Exists(base_ + "/x"));
  EXPECT_FALSE(Exists(R("a")));
}

TEST_P(LayerUnpackFormatTest, SymlinksNeverLeadOutOfTheRootfs) {
  // An absolute target is the rootfs: written inside.
  TarBuilder abs;
  abs.Symlink(base_, "to-base").File("to-base/sentinel", "overwritten?");
  ASSERT_TRUE(Apply(Build(abs)).ok());
  EXPECT_EQ(ReadAll(R(base_ + "/sentinel")), "overwritten?");
  // Climbing above the rootfs: refused.
  for (const char* target : {"..", "../..", "a/../../"}) {
    TarBuilder t;
    t.Symlink(target, "up").File("up/sentinel", "overwritten?");
    absl::Status s = Apply(Build(t));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << target << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("up/sentinel"));
  }
  // Through a chain of symlinks.
  TarBuilder chain;
  chain.Symlink("b", "a")
      .Symlink("c/..", "b")
      .Dir("c")
      .Symlink("../..", "c/d")
      .File("a/c/d/sentinel", "overwritten?");
  EXPECT_EQ(Apply(Build(chain)).code(), absl::StatusCode::kInvalidArgument);
  // A loop.
  TarBuilder loop;
  loop.Symlink("l2", "l1").Symlink("l1", "l2").File("l1/x", "x");
  EXPECT_EQ(Apply(Build(loop)).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(LayerUnpackFormatTest, RefusesHardLinksOutOfTheRootfsOrToNothing) {
  const std::vector<std::pair<const char*, std::string>> cases = {{"../sentinel", "out"},
                                                                  {"/etc/passwd", "abs"},
                                                                  {"missing", "missing"},
                                                                  {"up/sentinel", "via-up"}};
  for (const auto& [target, name] : cases) {
    TarBuilder t;
    t.Symlink("..", "up").Hardlink(target, name);
    absl::Status s = Apply(Build(t));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << target << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(target));
    EXPECT_FALSE(Exists(R(name)));
  }
  EXPECT_EQ(Lstat(base_ + "/sentinel").st_nlink, 1u);
}

TEST_P(LayerUnpackFormatTest, DiffIdIsTheDigestOfTheUncompressedTar) {
  auto build = [](TarBuilder& t) { t.File("a", "a").Dir("d").File("d/b", RandomBytes(10000, 1)); };
  TarBuilder plain;
  build(plain);
  const std::string diff_id = Sha256Digest(plain.Finish(false));
  TarBuilder layer;
  build(layer);
  const std::string bytes = Build(layer);
  EXPECT_TRUE(Apply(bytes, diff_id).ok());
  const std::string wrong = Sha256Digest("something else");
  absl::Status s = Apply(bytes, wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr(wrong));
  EXPECT_EQ(Apply(bytes, "sha256:nothex").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Apply(bytes, "md5:0123").code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(LayerUnpackFormatTest, EmptyLayer) {
  TarBuilder t;
  UnpackStats stats;
  EXPECT_TRUE(Apply(Build(t), "", &stats).ok());
  EXPECT_EQ(stats.entries, 0);
}

TEST_F(LayerUnpackTest, EscapesLandInsideTheRootfsOrAreRefused) {
  if (!kRoot) GTEST_SKIP() << "needs root for chroot";
  // In a chroot of base_: an escape would write base_/etc/passwd.
  TarBuilder abs;
  abs.Symlink("/", "evil").File("evil/etc/passwd", "root::0:0::/:/bin/sh\n");
  EXPECT_EQ(ApplyJailed(abs.Finish(true)), absl::StatusCode::kOk);
  EXPECT_EQ(ReadAll(R("etc/passwd")), "root::0:0::/:/bin/sh\n");
  TarBuilder rel;
  rel.Symlink("../../..", "evil2").File("evil2/etc/passwd", "x");
  EXPECT_EQ(ApplyJailed(rel.Finish(true)), absl::StatusCode::kInvalidArgument);
  TarBuilder names;
  names.File("../etc/passwd", "x");
  EXPECT_EQ(ApplyJailed(names.Finish(false)), absl::StatusCode::kInvalidArgument);
  TarBuilder link;
  link.Hardlink("../sentinel", "s");
  EXPECT_EQ(ApplyJailed(link.Finish(false)), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Exists(base_ + "/etc"));
}

TEST_F(LayerUnpackTest, TruncatedLayersAreDataLoss) {
  TarBuilder t;
  t.File("big", RandomBytes(200000, 2)).File("after", "x");
  const std::string tar = t.Finish(false);
  const std::string gz = Gzip(tar);
  for (size_t cut : {gz.size() / 2, gz.size() - 4, gz.size() - 1, size_t{10}}) {
    absl::Status s = Apply(gz.substr(0, cut));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut << ": " << s;
  }
  absl::Status s = Apply(tar.substr(0, 100000));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST_F(LayerUnpackTest, CorruptGzipIsDataLoss) {
  TarBuilder t;
  t.File("big", RandomBytes(100000, 3));
  const std::string gz = Gzip(t.Finish(false));
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x55;
  EXPECT_EQ(Apply(flipped).code(), absl::StatusCode::kDataLoss);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 1;
  EXPECT_EQ(Apply(bad_crc).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Apply(gz + "trailing garbage").code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Apply(gz + std::string(3000, '\0')).ok());  // padding to a block
  EXPECT_EQ(Apply(gz + std::string(3000, '\0') + "x").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Apply("\x1f\x8b not really gzip").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Apply(RandomBytes(5000, 4)).code(), absl::StatusCode::kDataLoss);
}

TEST_F(LayerUnpackTest, GzipMembersOneAfterAnotherAndZstd) {
  TarBuilder t;
  t.File("a", RandomBytes(30000, 5)).File("b", "b");
  const std::string tar = t.Finish(false);
  const std::string two = Gzip(tar.substr(0, 777)) + Gzip(tar.substr(777));
  EXPECT_TRUE(Apply(two, Sha256Digest(tar)).ok());
  EXPECT_EQ(ReadAll(R("b")), "b");
  fs::remove_all(rootfs_);
  fs::create_directory(rootfs_);
  UnpackStats stats;
  EXPECT_TRUE(Apply(Zstd(tar), Sha256Digest(tar), &stats).ok());
  EXPECT_EQ(stats.bytes, 30001);
  EXPECT_EQ(Apply(Zstd(tar).substr(0, 1000)).code(), absl::StatusCode::kDataLoss);
}

TEST_F(LayerUnpackTest, DiffIdCoversEverythingAfterTheEndOfTheArchive) {
  TarBuilder t;
  t.File("a", "a");
  const std::string tar = t.Finish(false) + std::string(10240, '\0');  // as tar pads a record
  EXPECT_TRUE(Apply(tar, Sha256Digest(tar)).ok());
  EXPECT_TRUE(Apply(Gzip(tar), Sha256Digest(tar)).ok());
  EXPECT_EQ(Apply(Gzip(tar), Sha256Digest(tar.substr(0, 2048))).code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(LayerUnpackTest, MissingLayerOrRootfs) {
  EXPECT_EQ(ApplyLayer(base_ + "/layers/none", rootfs_, "", nullptr).code(),
            absl::StatusCode::kNotFound);
  TarBuilder t;
  t.File("a", "a");
  std::ofstream(base_ + "/layers/l", std::ios::binary) << t.Finish(true);
  EXPECT_EQ(ApplyLayer(base_ + "/layers/l", base_ + "/none", "", nullptr).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(LayerUnpackTest, DeepTreesAreRemovedWithoutRunningOutOfFds) {
  std::string deep = "d";
  for (int i = 0; i < 1500; ++i) absl::StrAppend(&deep, "/d");
  TarBuilder lower;
  lower.File(deep + "/leaf", "x").File("d/side", "y");
  ASSERT_TRUE(Apply(lower.Finish(true)).ok());
  TarBuilder t;
  t.Whiteout("d");
  ASSERT_TRUE(Apply(t.Finish(true)).ok());
  EXPECT_FALSE(Exists(R("d")));
}

}  // namespace
}  // namespace paceline::image
