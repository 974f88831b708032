#include "common/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace paceline {
namespace {

namespace fs = std::filesystem;
using Options = AtomicWriteOptions;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("atomic_file_test." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static mode_t Mode(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, CreatesAndReplacesWithTheMode) {
  const std::string path = Path("f");
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  EXPECT_EQ(Read(path), "one");
  EXPECT_EQ(Mode(path), 0600u);
  ASSERT_TRUE(WriteFileAtomically(path, "two", {.mode = 0640, .sync = Options::Sync::kData}).ok());
  EXPECT_EQ(Read(path), "two");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(AtomicFileTest, LinkKeepsAnExistingFile) {
  const std::string path = Path("key");
  Options once{.temp_suffix = ".tmp.1", .dir_sync = Options::DirSync::kNone, .replace = false};
  ASSERT_TRUE(WriteFileAtomically(path, "first", once).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second", once).ok());
  EXPECT_EQ(Read(path), "first");
  EXPECT_FALSE(fs::exists(path + ".tmp.1"));
}

TEST_F(AtomicFileTest, ReportsTheFailedCallThroughTheErrorFunction) {
  const std::string path = Path("missing/f");
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message().substr(0, 5 + path.size() + 4), "open " + path + ".tmp");
  int seen = 0;
  s = WriteFileAtomically(path, "x", {}, [&](int err, absl::string_view what) {
    seen = err;
    return absl::UnavailableError(what);
  });
  EXPECT_EQ(seen, ENOENT);
  EXPECT_EQ(s, absl::UnavailableError("open " + path + ".tmp"));
}

TEST_F(AtomicFileTest, RemovesTheTemporaryFileWhenTheRenameFails) {
  const std::string path = Path("d");
  fs::create_directories(path + "/inside");  // a non-empty directory is not replaced
  EXPECT_FALSE(WriteFileAtomically(path, "x").ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(WriteFileAtomically(path, "x", {.remove_temp_on_failure = false}).ok());
  EXPECT_TRUE(fs::exists(path + ".tmp"));
}

TEST_F(AtomicFileTest, GivesTheFileToItsOwnerBeforeTheRename) {
  const std::string path = Path("token");
  // As root (CI), another user's; otherwise this user's own (chown to oneself is allowed).
  const bool root = ::geteuid() == 0;
  const Options::Owner owner{root ? 65534u : ::getuid(), root ? 65534u : ::getgid()};
  ASSERT_TRUE(WriteFileAtomically(path, "secret", {.mode = 0400, .owner = owner}).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, owner.uid);
  EXPECT_EQ(st.st_gid, owner.gid);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  EXPECT_EQ(Read(path), "secret");
}

TEST_F(AtomicFileTest, NeverWritesThroughALinkLeftAtTheTemporaryName) {
  const std::string path = Path("token");
  const std::string victim = Path("victim");
  ASSERT_TRUE(WriteFileAtomically(victim, "keep").ok());
  const Options::Owner me{::getuid(), ::getgid()};
  // A symbolic link: without an owner the write refuses it (O_NOFOLLOW) ...
  fs::create_symlink(victim, path + ".tmp");
  absl::Status s = WriteFileAtomically(path, "new", {.remove_temp_on_failure = false});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().substr(0, 5), "open ") << s;
  EXPECT_EQ(Read(victim), "keep");
  // ... with one, it is removed and the file made afresh.
  ASSERT_TRUE(WriteFileAtomically(path, "new", {.owner = me}).ok());
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(Read(victim), "keep");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path)));
  // A hard link is not reused either.
  fs::create_hard_link(victim, path + ".tmp");
  ASSERT_TRUE(WriteFileAtomically(path, "newer", {.owner = me}).ok());
  EXPECT_EQ(Read(path), "newer");
  EXPECT_EQ(Read(victim), "keep");
}

}  // namespace
}  // namespace paceline
