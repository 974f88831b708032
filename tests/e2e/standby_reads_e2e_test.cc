// Standbys answer reads (docs/operations.md "Reads on standbys"): from their copy of the store,
// each answer stamped with the revision it reflects and the copy's age; a client's own writes are
// reflected when it asks for their revision (the CLI does it by itself); a standby cut off from
// the database says how stale it is, then refuses past its bound, naming the leader; a revision
// a standby never reaches is refused after a bounded wait.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/network_cut.h"
#include "tests/e2e/postgres_util.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kQuick[] =
    "name: quick\ninstances: 1\ntask:\n  command: 'true'\n  resources: {cpu: 0.05, memory: 8Mi}\n";
constexpr char kSleeper[] =
    "name: sleeper\ninstances: 2\ntask:\n  command: 'sleep 600'\n"
    "  resources: {cpu: 0.05, memory: 8Mi}\n";

int64_t HeaderInt(const TestCluster::HttpResult& r, const std::string& name) {
  auto it = r.headers.find(name);
  int64_t n = -1;
  if (it == r.headers.end() || !absl::SimpleAtoi(it->second, &n)) return -1;
  return n;
}

std::string Header(const TestCluster::HttpResult& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

// GetJob over the JSON API of master `m`, asking for at least `min_revision` when >= 0.
TestCluster::HttpResult GetJob(TestCluster& c, uint64_t job, int m, int64_t min_revision = -1) {
  std::map<std::string, std::string> headers;
  if (min_revision >= 0) headers["X-Paceline-Min-Revision"] = absl::StrCat(min_revision);
  return c.Http("GET", absl::StrCat("/api/v1/JobService/GetJob?job_id=", job), "", true, m,
                headers);
}

// The CLI with every master listed, its ~/.paceline in the cluster's directory.
class Client {
 public:
  Client(TestCluster& c, std::vector<std::string> addrs)
      : c_(c), addrs_(absl::StrJoin(addrs, ",")), home_(c.dir() + "/home") {}
  RunResult Run(std::vector<std::string> args) {
    std::vector<std::string> full = {"--addr", addrs_, "--token", c_.token()};
    full.insert(full.end(), args.begin(), args.end());
    return RunProgram(full, {.env = {"HOME=" + home_}});
  }
  // The revision of this client's last write (cli/write_revision.h), -1 when none.
  int64_t WriteRevision() const {
    std::ifstream in(home_ + "/.paceline/revisions");
    std::string key;
    int64_t rev = -1, found = -1;
    while (in >> key >> rev) {
      if (key == addrs_) found = rev;
    }
    return found;
  }

 private:
  TestCluster& c_;
  std::string addrs_;
  std::string home_;
};

// Three masters: the standbys answer job and task reads with their stamp, reflect a revision
// asked for, refuse writes and revisions they never reach naming the leader; the CLI's reads,
// spread over the masters, always see its own writes.
TEST(StandbyReadsE2E, StandbysAnswerStampedReadsThatReflectTheClientsWrites) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 1, .store = pg->url(), .masters = 3, .lease = ""});
  const int leader = c.FindLeader(absl::Seconds(30));
  ASSERT_GE(leader, 0);
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  std::vector<int> standbys;
  std::vector<std::string> addrs;
  for (int i = 0; i < 3; ++i) {
    addrs.push_back(c.master_address(i));
    if (i != leader) standbys.push_back(i);
  }
  Client cli(c, addrs);
  const std::string spec = c.WriteFile("sleeper.yaml", kSleeper);
  RunResult created = cli.Run({"job", "create", "-f", spec, "--pool", "/e2e"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  uint64_t job = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(created.out), &job)) << created.out;
  const int64_t wrote = cli.WriteRevision();
  ASSERT_GE(wrote, 0) << "the CLI kept no revision for its write";

  // The leader's answers carry everything it committed; a standby's reflect at least the
  // revision asked for, at once.
  TestCluster::HttpResult lead = GetJob(c, job, leader);
  ASSERT_EQ(lead.status, 200) << lead.body;
  EXPECT_EQ(Header(lead, "X-Paceline-Served-By"), "leader");
  EXPECT_GE(HeaderInt(lead, "X-Paceline-Revision"), wrote);
  for (int s : standbys) {
    TestCluster::HttpResult r = GetJob(c, job, s, wrote);
    ASSERT_EQ(r.status, 200) << "standby " << s << ": " << r.body;
    EXPECT_EQ(Header(r, "X-Paceline-Served-By"), "standby");
    EXPECT_GE(HeaderInt(r, "X-Paceline-Revision"), wrote);
    const int64_t staleness = HeaderInt(r, "X-Paceline-Staleness-Ms");
    EXPECT_GE(staleness, 0);
    EXPECT_LT(staleness, 5000);
    Json j = Json::parse(r.body, nullptr, false);
    EXPECT_EQ(JsonInt(j["job"]["id"]), static_cast<int64_t>(job)) << r.body;
  }

  // Once running, the standbys show the tasks where the leader placed them.
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return TasksIn(j, "RUNNING") == 2; }, absl::Seconds(60)));
  const int s = standbys.front();
  ASSERT_TRUE(WaitFor(
      [&] {
        TestCluster::HttpResult r =
            c.Http("GET", absl::StrCat("/api/v1/TaskService/ListTasks?job_id=", job), "", true, s);
        return r.status == 200 && absl::StrContains(r.body, "RUNNING") &&
               absl::StrContains(r.body, c.agent_name(0));
      },
      absl::Seconds(10)));

  // A watch on the standby sees the job end when the leader kills it (the watch of one job
  // ends with it).
  Process watch = Process::Start(
      {"--addr", c.master_address(s), "--token", c.token(), "job", "watch", absl::StrCat(job)},
      {.cwd = c.dir()});
  ASSERT_TRUE(
      WaitFor([&] { return absl::StrContains(watch.Stdout(), "watching"); }, absl::Seconds(10)))
      << watch.Output();
  ASSERT_EQ(c.Cli({"job", "kill", absl::StrCat(job)}).exit_code, 0);
  EXPECT_TRUE(watch.WaitExit(absl::Seconds(30)).has_value()) << watch.Output();
  EXPECT_THAT(watch.Stdout(), HasSubstr("KILLED"));

  // Writes and the calls a standby does not answer name the leader.
  TestCluster::HttpResult write = c.Http("POST", "/api/v1/JobService/KillJob",
                                         absl::StrCat("{\"job_id\": \"", job, "\"}"), true, s);
  EXPECT_EQ(write.status, 503) << write.body;
  EXPECT_THAT(write.body, HasSubstr("leader: " + c.master_address(leader)));
  // A revision this standby never reaches: refused after a bounded wait, naming the leader.
  absl::Time asked = absl::Now();
  TestCluster::HttpResult ahead = GetJob(c, job, s, wrote + 1000000);
  absl::Duration waited = absl::Now() - asked;
  EXPECT_EQ(ahead.status, 503) << ahead.body;
  EXPECT_THAT(ahead.body, HasSubstr("not reached within 2s"));
  EXPECT_THAT(ahead.body, HasSubstr("leader: " + c.master_address(leader)));
  EXPECT_GE(waited, absl::Seconds(2));
  EXPECT_LT(waited, absl::Seconds(10));
  TestCluster::HttpResult bad =
      c.Http("GET", absl::StrCat("/api/v1/JobService/GetJob?job_id=", job), "", true, s,
             {{"X-Paceline-Min-Revision", "soon"}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("paceline-min-revision: expected a revision number, got 'soon'"));

  const std::string quick = c.WriteFile("quick.yaml", kQuick);
  // The CLI: each command writes, then reads at once from a master picked at random (or the
  // standby listed first, with --reads leader); every read sees the write before it.
  for (int round = 0; round < 6; ++round) {
    RunResult made = cli.Run({"job", "create", "-f", quick, "--pool", "/e2e"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string id(absl::StripAsciiWhitespace(made.out));
    RunResult got = cli.Run({"job", "get", id, "-o", "json"});
    ASSERT_EQ(got.exit_code, 0) << "round " << round << ": " << got.err;
    EXPECT_EQ(JsonInt(Json::parse(got.out, nullptr, false)["job"]["id"]), std::stoll(id));
  }
  std::vector<std::string> standby_first = {c.master_address(s), c.master_address(leader)};
  Client pinned(c, standby_first);
  // A revision kept from another database behind the same addresses (a cluster made again):
  // the first read waits on the standby, goes to the leader, and the revision is forgotten.
  {
    std::ofstream out(c.dir() + "/home/.paceline/revisions", std::ios::app);
    out << absl::StrJoin(standby_first, ",") << " 99999999\n";
  }
  RunResult stale =
      pinned.Run({"--reads", "leader", "job", "get", absl::StrCat(job), "-o", "json"});
  EXPECT_EQ(stale.exit_code, 0) << stale.err;
  EXPECT_LT(pinned.WriteRevision(), 99999999);
  for (int round = 0; round < 3; ++round) {
    RunResult made = pinned.Run({"job", "create", "-f", quick, "--pool", "/e2e"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string id(absl::StripAsciiWhitespace(made.out));
    RunResult got = pinned.Run({"--reads", "leader", "job", "get", id, "-o", "json"});
    ASSERT_EQ(got.exit_code, 0) << "round " << round << ": " << got.err;
    EXPECT_EQ(JsonInt(Json::parse(got.out, nullptr, false)["job"]["id"]), std::stoll(id));
  }
}

// Two masters; the standby reaches the database through 127.0.0.2, which is then cut. Its reads
// carry their growing age, then are refused once past the bound (3s), naming the leader, which
// the CLI then asks; when the path heals it answers again.
TEST(StandbyReadsE2E, AStandbyCutOffFromTheDatabaseSaysHowStaleThenRefuses) {
  auto pg = store::testing::PostgresServer::Start({.also_listen = "127.0.0.2"});
  ASSERT_TRUE(pg.ok()) << pg.status();
  const std::string cut_store = absl::StrReplaceAll((*pg)->url(), {{"127.0.0.1:", "127.0.0.2:"}});
  TestCluster c({.agents = 1,
                 .store = (*pg)->url(),
                 .master_store = {{1, cut_store}},
                 .master_args = {"--standby-read-bound", "3s"},
                 .masters = 2,
                 .lease = ""});
  ASSERT_EQ(c.FindLeader(absl::Seconds(30)), 0);
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  const uint64_t job = c.CreateJob("/e2e", kSleeper);
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitFor([&] { return GetJob(c, job, 1).status == 200; }, absl::Seconds(10)));

  NetworkCut cut("127.0.0.2");
  const absl::Time cut_at = absl::Now();
  int64_t stalest_answer = -1;
  TestCluster::HttpResult refused;
  while (absl::Now() - cut_at < absl::Seconds(20)) {
    TestCluster::HttpResult r = GetJob(c, job, 1);
    if (r.status == 200) {
      stalest_answer = std::max(stalest_answer, HeaderInt(r, "X-Paceline-Staleness-Ms"));
    } else {
      refused = r;
      break;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  std::cout << "the cut-off standby answered up to " << stalest_answer << " ms stale, and refused "
            << absl::FormatDuration(absl::Now() - cut_at) << " after the cut" << std::endl;
  EXPECT_GE(stalest_answer, 1000) << "no stale answer said how stale it was";
  EXPECT_LE(stalest_answer, 3000);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("past its bound of 3s (--standby-read-bound)"));
  EXPECT_THAT(refused.body, HasSubstr("leader: " + c.master_address(0)));
  // The CLI, reading from the standby first, is sent to the leader.
  RunResult got =
      RunPaceline({"--addr", c.master_address(1) + "," + c.master_address(0), "--reads", "leader",
                   "--token", c.token(), "job", "get", absl::StrCat(job), "-o", "json"});
  EXPECT_EQ(got.exit_code, 0) << got.err;

  cut.Heal();
  EXPECT_TRUE(WaitFor(
      [&] {
        TestCluster::HttpResult r = GetJob(c, job, 1);
        return r.status == 200 && HeaderInt(r, "X-Paceline-Staleness-Ms") < 2000;
      },
      absl::Seconds(30)))
      << c.master(1).Output();
  // Its tasks would outlive the agent (which re-adopts them): end the job.
  EXPECT_EQ(c.Cli({"job", "kill", absl::StrCat(job)}).exit_code, 0);
  EXPECT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return TasksIn(j, "RUNNING") == 0; }, absl::Seconds(30)));
}

}  // namespace
}  // namespace paceline::e2e
