#include "agent/host/proc_stat.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(ProcStatTest, ParsesPidStatWithSpacesAndParensInComm) {
  std::string text =
      "4242 (we ird) (cmd)) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 23 0 0 20 0 1 0 987654 "
      "1000000 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
  absl::StatusOr<PidStat> st = ParsePidStat(text);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 1);
  EXPECT_EQ(st->pgrp, 4242);
  EXPECT_EQ(st->session, 4242);
  EXPECT_EQ(st->utime_ticks, 17u);
  EXPECT_EQ(st->stime_ticks, 23u);
  EXPECT_EQ(st->start_ticks, 987654u);
  EXPECT_EQ(st->rss_pages, 321);
}

TEST(ProcStatTest, RejectsGarbage) {
  EXPECT_FALSE(ParsePidStat("").ok());
  EXPECT_FALSE(ParsePidStat("12 (x) S 1 2").ok());
}

TEST(ProcStatTest, OwnProcessIsAliveWithItsStartTime) {
  absl::StatusOr<PidStat> st = ReadPidStat(::getpid());
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(ProcessAlive(::getpid(), st->start_ticks));
  EXPECT_FALSE(ProcessAlive(::getpid(), st->start_ticks + 1));  // a reused pid
  EXPECT_FALSE(ProcessAlive(0, 0));
}

TEST(ProcStatTest, ParsesHostCpuTimes) {
  absl::StatusOr<HostCpuTimes> t =
      ParseProcStat("cpu  10 20 30 400 50 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->busy_ticks, 10u + 20 + 30 + 6 + 7 + 8);
  EXPECT_EQ(t->total_ticks, t->busy_ticks + 400 + 50);
  EXPECT_FALSE(ParseProcStat("intr 1\n").ok());
}

TEST(ProcStatTest, ParsesMeminfo) {
  absl::StatusOr<MemInfo> m =
      ParseMeminfo("MemTotal:       24684000 kB\nMemFree: 1 kB\nMemAvailable:   2000 kB\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->total_bytes, 24684000LL * 1024);
  EXPECT_EQ(m->available_bytes, 2000LL * 1024);
  EXPECT_FALSE(ParseMeminfo("MemFree: 1 kB\n").ok());
  EXPECT_FALSE(BootId().empty());
}

}  // namespace
}  // namespace paceline::agent
