#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "archive/archive_files.h"
#include "archive/archive_format.h"
#include "archive/archive_reader.h"
#include "archive/archive_writer.h"
#include "archive/gzip.h"
#include "nlohmann/json.hpp"

namespace paceline::archive {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const absl::Time kDay1 = absl::FromUnixSeconds(1795651200);  // 2026-11-26T00:00:00Z
const absl::Time kDay2 = kDay1 + absl::Hours(24);

records::JobHistory Job(uint64_t id, const std::string& pool, absl::Time finished,
                        int exit_code = 0) {
  records::JobHistory h;
  h.job.id = JobId(id);
  h.job.pool = pool;
  h.job.spec.name = absl::StrCat("job-", id);
  h.job.spec.instances = 1;
  h.job.spec.task.command = "true";
  h.job.spec.task.resources = Resources::Of(100, 1 << 20);
  h.job.created_at = finished - absl::Minutes(5);
  h.job.instances = 1;
  records::TaskRecord t;
  t.id = TaskId{JobId(id), 0};
  t.run = 1;
  t.state = exit_code == 0 ? TaskState::kSucceeded : TaskState::kFailed;
  t.host = "h1";
  t.started_at = finished - absl::Minutes(1);
  t.finished_at = finished;
  t.exit_code = exit_code;
  h.tasks.push_back(t);
  h.events.push_back({RunId{t.id, 1}, t.started_at, TaskState::kRunning, "h1", "STARTED", ""});
  h.events.push_back({RunId{t.id, 1}, finished, t.state, "h1", "EXITED", "exit 0"});
  return h;
}

class ArchiveTest : public ::testing::Test {
 protected:
  ArchiveTest()
      : dir_(absl::StrCat(::testing::TempDir(), "/archive-test-", ::getpid(), "-",
                          ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(dir_);
  }
  ~ArchiveTest() override { std::filesystem::remove_all(dir_); }

  Json Find(uint64_t id) {
    absl::StatusOr<std::optional<std::string>> line = ArchiveReader(dir_).FindJob(JobId(id));
    EXPECT_TRUE(line.ok()) << line.status();
    if (!line.ok() || !line->has_value()) return nullptr;
    return Json::parse(**line);
  }

  std::vector<uint64_t> Ids(const ArchiveQuery& q, bool* truncated = nullptr) {
    absl::StatusOr<ArchiveMatches> m = ArchiveReader(dir_).Find(q);
    EXPECT_TRUE(m.ok()) << m.status();
    std::vector<uint64_t> ids;
    if (!m.ok()) return ids;
    for (const std::string& l : m->lines) ids.push_back(Json::parse(l)["job_id"]);
    if (truncated != nullptr) *truncated = m->truncated;
    return ids;
  }

  std::string dir_;
};

TEST_F(ArchiveTest, AJobIsOneJsonLineWithItsTasksAndEvents) {
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(7, "/ads", kDay1 + absl::Hours(3), 2)}, kDay2).ok());
  Json j = Find(7);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["job_id"], 7);
  EXPECT_EQ(j["format"], kFormatVersion);
  EXPECT_EQ(j["pool"], "/ads");
  EXPECT_EQ(j["name"], "job-7");
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["finished_at"], "2026-11-26T03:00:00.000Z");
  EXPECT_EQ(j["archived_at"], "2026-11-27T00:00:00.000Z");
  EXPECT_THAT(std::string(j["spec"]), HasSubstr("command: true"));
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["exit_code"], 2);
  EXPECT_EQ(j["tasks"][0]["state"], "FAILED");
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][1]["message"], "exit 0");
  EXPECT_TRUE(Find(8).is_null());
}

TEST_F(ArchiveTest, EachDayIsOneGzipStreamOfItsBatchesThatAnyReaderReads) {
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(1, "/a", kDay1 + absl::Hours(1)), Job(2, "/a", kDay2)}, kDay2).ok());
  ASSERT_TRUE(w.Append({Job(3, "/b", kDay1 + absl::Hours(2))}, kDay2).ok());
  EXPECT_TRUE(std::filesystem::exists(DataPath(dir_, "2026-11-27")));
  absl::StatusOr<std::string> gz = ReadWhole(DataPath(dir_, "2026-11-26"));
  ASSERT_TRUE(gz.ok());
  absl::StatusOr<std::string> text = Gunzip(*gz);  // two members, one stream
  ASSERT_TRUE(text.ok()) << text.status();
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Json::parse(lines[0])["job_id"], 1);
  EXPECT_EQ(Json::parse(lines[1])["job_id"], 3);
  // The system's own gzip agrees.
  std::string out = absl::StrCat(dir_, "/zcat.txt");
  ASSERT_EQ(std::system(absl::StrCat("zcat ", DataPath(dir_, "2026-11-26"), " > ", out).c_str()),
            0);
  EXPECT_EQ(*ReadWhole(out), *text);
}

TEST_F(ArchiveTest, QueriesSelectByFinishTimeAndPoolSubtreeInOrderWithALimit) {
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(1, "/ads", kDay1 + absl::Hours(1)),
                        Job(2, "/ads/train", kDay1 + absl::Hours(2)),
                        Job(3, "/adsx", kDay1 + absl::Hours(3)), Job(4, "/ads", kDay2)},
                       kDay2)
                  .ok());
  EXPECT_THAT(Ids({}), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Ids({.pool = "/ads"}), ElementsAre(1, 2, 4)) << "not /adsx";
  EXPECT_THAT(Ids({.since = kDay1 + absl::Hours(2), .until = kDay2}), ElementsAre(2, 3));
  bool truncated = false;
  EXPECT_THAT(Ids({.limit = 2}, &truncated), ElementsAre(1, 2));
  EXPECT_TRUE(truncated);
}

TEST_F(ArchiveTest, AJobArchivedTwiceReadsAsTheLaterLine) {
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(5, "/a", kDay1, 1)}, kDay1).ok());
  ASSERT_TRUE(w.Append({Job(5, "/a", kDay1, 0)}, kDay1 + absl::Hours(1)).ok());
  EXPECT_EQ(Find(5)["state"], "SUCCEEDED");
  EXPECT_THAT(Ids({}), ElementsAre(5));
}

TEST_F(ArchiveTest, ANewWriterCutsWhatACrashLeftPastTheLastIndexedMember) {
  {
    ArchiveWriter w(dir_);
    ASSERT_TRUE(w.Append({Job(1, "/a", kDay1)}, kDay1).ok());
  }
  // A crash: a member written but never indexed, and a torn index line.
  const std::string data = DataPath(dir_, "2026-11-26"), index = IndexPath(dir_, "2026-11-26");
  const int64_t good_data = *FileSize(data), good_index = *FileSize(index);
  std::ofstream(data, std::ios::app) << GzipMember("{\"job_id\":2,\"half\":") << "garbage";
  std::ofstream(index, std::ios::app) << "2 999 12";
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(3, "/a", kDay1)}, kDay1).ok());
  EXPECT_FALSE(Find(1).is_null());
  EXPECT_FALSE(Find(3).is_null());
  EXPECT_TRUE(Find(2).is_null());
  absl::StatusOr<std::string> text = Gunzip(*ReadWhole(data));
  ASSERT_TRUE(text.ok()) << text.status() << ": the leftovers were cut";
  EXPECT_GT(*FileSize(data), good_data);
  EXPECT_GT(*FileSize(index), good_index);
}

TEST_F(ArchiveTest, AFullDiskFailsTheAppendAndChangesNothing) {
  ArchiveWriter first(dir_);
  ASSERT_TRUE(first.Append({Job(1, "/a", kDay2)}, kDay2).ok());
  // The next day's data file is on a device that is always full.
  std::filesystem::create_symlink("/dev/full", DataPath(dir_, "2026-11-26"));
  ArchiveWriter w(dir_);
  absl::StatusOr<int64_t> s = w.Append({Job(2, "/a", kDay1)}, kDay2);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("cannot write"));
  EXPECT_FALSE(std::filesystem::exists(IndexPath(dir_, "2026-11-26")) &&
               *FileSize(IndexPath(dir_, "2026-11-26")) > 0)
      << "nothing indexed";
  EXPECT_TRUE(Find(2).is_null());
  EXPECT_FALSE(Find(1).is_null());
}

TEST_F(ArchiveTest, AnIndexLineNamingBytesTheDataLacksIsDataLossNotACrash) {
  ArchiveWriter w(dir_);
  ASSERT_TRUE(w.Append({Job(1, "/a", kDay1)}, kDay1).ok());
  ASSERT_TRUE(Truncate(DataPath(dir_, "2026-11-26"), 10).ok());
  absl::StatusOr<std::optional<std::string>> line = ArchiveReader(dir_).FindJob(JobId(1));
  EXPECT_EQ(line.status().code(), absl::StatusCode::kDataLoss) << line.status();
}

TEST(ArchiveFormatTest, PoolsAndIndexLines) {
  EXPECT_TRUE(InPool("/ads/train", "/ads"));
  EXPECT_TRUE(InPool("/ads", "/ads"));
  EXPECT_FALSE(InPool("/adsx", "/ads"));
  EXPECT_TRUE(InPool("/x", "/"));
  IndexEntry e{JobId(9), 10, 20, absl::FromUnixMillis(1234), "/a b"};
  std::vector<IndexEntry> back = ParseIndex(IndexLine(e) + "9 10");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].pool, "/a b");
  EXPECT_EQ(back[0].finished_at, absl::FromUnixMillis(1234));
  EXPECT_EQ(back[0].line_end, IndexLine(e).size());
  // A line written otherwise than IndexLine would (leading zeros) ends where it ends.
  EXPECT_EQ(ParseIndex("007 0 1 2 /a\n")[0].line_end, 13u);
  EXPECT_TRUE(ParseIndex("x 1 2 3 /a\n").empty());
}

}  // namespace
}  // namespace paceline::archive
