// The throw-away PostgreSQL server of the tests: it starts on loopback and answers, stops and
// comes back on the same port with its data, gives each test a separate empty database, cleans
// up after itself, and does not outlive a test process that dies.

#include "store/testing/postgres_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace paceline::store::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The first value of the first row of `sql` on `url`, or the error.
absl::StatusOr<std::string> Query(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(absl::StrCat(url, "?connect_timeout=5").c_str());
  absl::StatusOr<std::string> out;
  if (PQstatus(c) != CONNECTION_OK) {
    out = absl::UnavailableError(PQerrorMessage(c));
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK && PQntuples(r) > 0) {
      out = std::string(PQgetvalue(r, 0, 0));
    } else if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
      out = std::string();
    } else {
      out = absl::InternalError(PQerrorMessage(c));
    }
    PQclear(r);
  }
  PQfinish(c);
  return out;
}

std::unique_ptr<PostgresServer> MustStart(PostgresServerOptions o = {}) {
  auto s = PostgresServer::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// True when `pid` is no process any more, or only a zombie that nobody reaped yet.
bool Gone(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return true;
  size_t paren = line.rfind(')');
  return paren == std::string::npos || line.substr(paren + 2, 1) == "Z";
}

bool GoneWithin(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!Gone(pid)) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

TEST(PostgresServer, StartsOnLoopbackAndAnswers) {
  auto pg = MustStart();
  ASSERT_NE(pg, nullptr);
  EXPECT_GT(pg->pid(), 0);
  EXPECT_GT(pg->port(), 0);
  EXPECT_TRUE(fs::exists(fs::path(pg->dir()) / "server.log"));
  EXPECT_EQ(pg->url(), absl::StrCat("postgres://paceline@127.0.0.1:", pg->port(), "/paceline"));
  EXPECT_EQ(pg->url_for("x"), absl::StrCat("postgres://paceline@127.0.0.1:", pg->port(), "/x"));
  EXPECT_EQ(Query(pg->url(), "SELECT 1").value_or("error"), "1");
  EXPECT_EQ(Query(pg->url(), "SELECT current_user").value_or("error"), "paceline");
  EXPECT_EQ(Query(pg->url(), "SELECT current_database()").value_or("error"), "paceline");
  EXPECT_EQ(Query(pg->url(), "SHOW listen_addresses").value_or("error"), "127.0.0.1");
  EXPECT_EQ(Query(pg->url(), "SHOW unix_socket_directories").value_or("error"), pg->dir());
  EXPECT_EQ(Query(pg->url(), "SHOW fsync").value_or("error"), "off");
  EXPECT_EQ(Query(pg->url(), "SHOW synchronous_commit").value_or("error"), "off");
  if (::geteuid() == 0) {  // PostgreSQL does not run as root: the server is `postgres`'s
    struct stat st {};
    ASSERT_EQ(::stat(absl::StrCat("/proc/", pg->pid()).c_str(), &st), 0);
    struct passwd* pw = ::getpwnam("postgres");
    ASSERT_NE(pw, nullptr);
    EXPECT_EQ(st.st_uid, pw->pw_uid);
  }
}

TEST(PostgresServer, StopsAndStartsAgainOnTheSamePortWithItsData) {
  auto pg = MustStart();
  ASSERT_NE(pg, nullptr);
  ASSERT_TRUE(Query(pg->url(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('yes')").ok());
  const int port = pg->port();
  const pid_t first = pg->pid();

  ASSERT_TRUE(pg->Stop().ok());
  EXPECT_EQ(pg->pid(), -1);
  EXPECT_TRUE(Gone(first));
  auto down = Query(pg->url(), "SELECT 1");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(pg->Stop().ok());  // stopping a stopped server is fine

  ASSERT_TRUE(pg->StartAgain().ok());
  EXPECT_EQ(pg->port(), port);
  EXPECT_GT(pg->pid(), 0);
  EXPECT_EQ(Query(pg->url(), "SELECT v FROM kept").value_or("error"), "yes");
  absl::Status twice = pg->StartAgain();
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PostgresServer, CreateDatabaseGivesASeparateEmptyDatabase) {
  auto pg = MustStart();
  ASSERT_NE(pg, nullptr);
  ASSERT_TRUE(Query(pg->url(), "CREATE TABLE mine (v int)").ok());
  ASSERT_TRUE(pg->CreateDatabase("other").ok());
  EXPECT_EQ(Query(pg->url_for("other"), "SELECT current_database()").value_or("error"), "other");
  EXPECT_EQ(Query(pg->url_for("other"), "SELECT to_regclass('mine') IS NULL").value_or("error"),
            "t");
  EXPECT_EQ(
      Query(pg->url_for("other"), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
          .value_or("error"),
      "0");
  EXPECT_EQ(Query(pg->url(), "SELECT to_regclass('mine') IS NULL").value_or("error"), "f");

  absl::Status again = pg->CreateDatabase("other");
  EXPECT_FALSE(again.ok());
  EXPECT_THAT(again.message(), HasSubstr("already exists"));
  // A name is an identifier, never SQL.
  EXPECT_TRUE(pg->CreateDatabase("odd\"; DROP DATABASE other; --").ok());
  EXPECT_TRUE(Query(pg->url_for("other"), "SELECT 1").ok());
}

TEST(PostgresServer, OptionsNameTheDatabaseAndTurnFsyncOn) {
  auto pg = MustStart({.fsync = true, .database = "bench"});
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->url(), pg->url_for("bench"));
  EXPECT_EQ(Query(pg->url(), "SELECT current_database()").value_or("error"), "bench");
  EXPECT_EQ(Query(pg->url(), "SHOW fsync").value_or("error"), "on");
  EXPECT_EQ(Query(pg->url(), "SHOW synchronous_commit").value_or("error"), "on");
  EXPECT_EQ(Query(pg->url(), "SHOW full_page_writes").value_or("error"), "on");
}

TEST(PostgresServer, TheDestructorStopsTheServerAndRemovesItsDirectory) {
  auto pg = MustStart();
  ASSERT_NE(pg, nullptr);
  const std::string dir = pg->dir();
  const pid_t pid = pg->pid();
  const std::string url = pg->url();
  ASSERT_TRUE(fs::exists(dir));
  pg.reset();
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(Gone(pid));
  EXPECT_FALSE(Query(url, "SELECT 1").ok());
}

TEST(PostgresServer, DoesNotOutliveATestProcessThatDies) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a test process that dies without running any destructor
    ::close(fds[0]);
    auto pg = PostgresServer::Start();
    std::string report = pg.ok() ? absl::StrCat((*pg)->pid(), " ", (*pg)->dir()) : "failed";
    (void)!::write(fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) report.append(buf, n);
  ::close(fds[0]);
  ::waitpid(child, nullptr, 0);
  size_t space = report.find(' ');
  ASSERT_NE(space, std::string::npos) << report;
  pid_t pid = std::stoi(report.substr(0, space));
  std::string dir = report.substr(space + 1);
  EXPECT_TRUE(GoneWithin(pid, absl::Seconds(10)));
  std::error_code ec;
  fs::remove_all(dir, ec);  // left behind, as the header says
}

}  // namespace
}  // namespace paceline::store::testing
