// The CLI through a master restart and with several masters (src/cli/rpc.h): long-running
// commands and reads retry while the master is down, a list of masters is tried in turn, a
// standby's redirect is followed, and a write that may have reached a master is never sent twice.
// Masters are killed with SIGKILL and started again on the same address and data dir; fake
// masters run in this process on loopback.

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "paceline/v1/job.grpc.pb.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";
// Nothing listens on port 1 of loopback: connections are refused at once.
constexpr char kNobody[] = "127.0.0.1:1";

std::string JobSpec(const std::string& name, const std::string& command) {
  return absl::StrCat("name: ", name, "\ninstances: 1\ntask:\n  command: \"", command,
                      "\"\n  resources: {cpu: 0.1, memory: 16Mi}\n");
}

// How many lines of `text` contain `what`.
int LinesWith(const std::string& text, const std::string& what) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) n += absl::StrContains(line, what);
  return n;
}

// The ids of the jobs named `name`.
std::vector<std::string> JobsNamed(TestCluster& c, const std::string& name) {
  Json list = c.CliJson({"job", "list", "--name", name});
  std::vector<std::string> ids;
  for (const Json& j : list.value("jobs", Json::array())) ids.push_back(j.value("id", ""));
  return ids;
}

void KillMaster(TestCluster& c) {
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
}

// A master that answers every job call with one status: a master whose store fails after it
// took the call (UNAVAILABLE, no leader), or a standby naming the leader in its message or in
// the paceline-leader trailer. It counts the calls it got.
class FakeMaster final : public v1::JobService::Service {
 public:
  explicit FakeMaster(grpc::Status answer, std::string leader_trailer = "")
      : answer_(std::move(answer)), trailer_(std::move(leader_trailer)) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  ~FakeMaster() override { server_->Shutdown(std::chrono::system_clock::now()); }

  const std::string& address() const { return address_; }
  int creates() const { return creates_; }
  int gets() const { return gets_; }

  grpc::Status CreateJob(grpc::ServerContext* ctx, const v1::CreateJobRequest*,
                         v1::CreateJobResponse*) override {
    ++creates_;
    return Answer(ctx);
  }
  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest*,
                      v1::GetJobResponse*) override {
    ++gets_;
    return Answer(ctx);
  }

 private:
  grpc::Status Answer(grpc::ServerContext* ctx) {
    if (!trailer_.empty()) ctx->AddTrailingMetadata("paceline-leader", trailer_);
    return answer_;
  }

  const grpc::Status answer_;
  const std::string trailer_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::atomic<int> creates_{0}, gets_{0};
};

// (1) `job wait` started while the master is down rides through its restart and succeeds when
// the job ends; a `job watch` that was running reconnects and prints nothing twice.
TEST(CliRetryE2E, WaitAndWatchRideThroughAMasterRestart) {
  TestCluster c({.agents = 1, .host_timeout = "10s"});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  uint64_t job = c.CreateJob("/e2e", JobSpec("ride", "sleep 8"));
  ASSERT_GT(job, 0u);
  std::string id = std::to_string(job);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["task_counts"].value("RUNNING", 0) == 1; },
      absl::Seconds(30)));
  Process watch = c.StartCli({"job", "watch", id});
  std::string running = absl::StrCat("  job ", id, "  RUNNING");
  ASSERT_TRUE(WaitFor([&] { return LinesWith(watch.Stdout(), running) == 1; }, absl::Seconds(15)))
      << watch.Output();

  KillMaster(c);
  Process wait = c.StartCli({"job", "wait", id, "--timeout", "90s"});
  absl::SleepFor(absl::Seconds(3));
  c.StartMaster();

  std::optional<int> waited = wait.WaitExit(absl::Seconds(45));
  ASSERT_TRUE(waited.has_value()) << wait.Output();
  EXPECT_EQ(*waited, 0) << wait.Output();
  EXPECT_THAT(wait.Stderr(), HasSubstr(absl::StrCat("paceline: master ", c.master_address(0),
                                                    " unavailable (connection refused); "
                                                    "retrying in ")));
  EXPECT_THAT(wait.Stderr(), HasSubstr(absl::StrCat("job ", id, " SUCCEEDED")));

  std::optional<int> watched = watch.WaitExit(absl::Seconds(30));
  ASSERT_TRUE(watched.has_value()) << watch.Output();
  EXPECT_EQ(*watched, 0) << watch.Output();
  EXPECT_THAT(watch.Stderr(),
              HasSubstr(absl::StrCat("paceline: master ", c.master_address(0), " unavailable (")));
  EXPECT_EQ(LinesWith(watch.Stdout(), running), 1) << watch.Output();
  EXPECT_EQ(LinesWith(watch.Stdout(), absl::StrCat("  job ", id, "  SUCCEEDED")), 1)
      << watch.Output();
  EXPECT_EQ(LinesWith(watch.Stdout(), absl::StrCat("  ", id, "/0 run 1  SUCCEEDED")), 1)
      << watch.Output();
}

// (2) A one-shot read waits for a master that comes back within --timeout, and fails after
// about --timeout, saying why, when it does not.
TEST(CliRetryE2E, OneShotReadRetriesWithinItsTimeout) {
  TestCluster c({.agents = 0});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  std::string id = std::to_string(c.CreateJob("/e2e", JobSpec("read", "true")));

  KillMaster(c);
  Process get = c.StartCli({"--timeout", "20s", "job", "get", id, "-o", "json"});
  absl::SleepFor(absl::Seconds(3));
  c.StartMaster();
  std::optional<int> got = get.WaitExit(absl::Seconds(25));
  ASSERT_TRUE(got.has_value()) << get.Output();
  EXPECT_EQ(*got, 0) << get.Output();
  Json j = Json::parse(get.Stdout(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << get.Output();
  EXPECT_EQ(j["job"].value("id", ""), id);
  EXPECT_THAT(get.Stderr(), HasSubstr("unavailable (connection refused); retrying in"));

  KillMaster(c);
  absl::Time start = absl::Now();
  RunResult gone = c.Cli({"--timeout", "4s", "job", "get", id});
  absl::Duration took = absl::Now() - start;
  EXPECT_EQ(gone.exit_code, 1) << gone.err;
  EXPECT_GE(took, absl::Seconds(3));
  EXPECT_LT(took, absl::Seconds(10));
  EXPECT_THAT(gone.err, HasSubstr(absl::StrCat("error: cannot reach the master at ",
                                               c.master_address(0), " (from --addr)")));
  EXPECT_THAT(gone.err, HasSubstr("gave up after"));
  EXPECT_THAT(gone.out, Not(HasSubstr(id)));
  c.StartMaster();
}

// (3) Of `--addr DOWN,UP` the CLI uses the second, for reads and writes.
TEST(CliRetryE2E, SecondMasterOfTheListIsUsedWhenTheFirstIsDown) {
  TestCluster c({.agents = 0});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  std::string good = c.master_address(0);
  std::string both = absl::StrCat(kNobody, ",", good);

  // Reads where the writes go (the first listed master first), not to one picked at random.
  RunResult info = RunPaceline(
      {"--addr", both, "--reads", "leader", "--token", c.token(), "info", "-o", "json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(Json::parse(info.out, nullptr, false).value("address", ""), good) << info.out;
  EXPECT_THAT(info.err, HasSubstr(absl::StrCat("paceline: master ", kNobody,
                                               " unavailable (connection refused); trying ", good,
                                               " (attempt 2, ")));

  std::string spec = c.WriteFile("listed.yaml", JobSpec("listed", "true"));
  RunResult created = RunPaceline(
      {"--addr", both, "--token", c.token(), "job", "create", "-f", spec, "--pool", "/e2e"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::string id(absl::StripAsciiWhitespace(created.out));
  EXPECT_EQ(JobsNamed(c, "listed"), std::vector<std::string>{id});

  RunResult get =
      RunPaceline({"--addr", both, "--token", c.token(), "job", "get", id, "-o", "json"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(Json::parse(get.out, nullptr, false)["job"].value("id", ""), id);
}

// (4) A create against a master that is down is sent only once it is up: one that gives up
// creates nothing, one that waits creates exactly one job.
TEST(CliRetryE2E, CreateAgainstADownMasterIsNeverDuplicated) {
  TestCluster c({.agents = 0});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  std::string spec = c.WriteFile("once.yaml", JobSpec("once", "true"));

  KillMaster(c);
  RunResult refused = c.Cli({"--timeout", "3s", "job", "create", "-f", spec, "--pool", "/e2e"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("cannot reach the master at"));
  EXPECT_EQ(refused.out, "");
  c.StartMaster();
  EXPECT_EQ(JobsNamed(c, "once").size(), 0u);

  KillMaster(c);
  Process create = c.StartCli({"--timeout", "30s", "job", "create", "-f", spec, "--pool", "/e2e"});
  absl::SleepFor(absl::Seconds(3));
  c.StartMaster();
  std::optional<int> created = create.WaitExit(absl::Seconds(30));
  ASSERT_TRUE(created.has_value()) << create.Output();
  ASSERT_EQ(*created, 0) << create.Output();
  EXPECT_THAT(create.Stderr(), HasSubstr("unavailable (connection refused); retrying in"));
  std::string id(absl::StripAsciiWhitespace(create.Stdout()));
  EXPECT_EQ(JobsNamed(c, "once"), std::vector<std::string>{id});
}

// A write that reached a master which then failed is not sent again (it may have been made); a
// read is retried until --timeout.
TEST(CliRetryE2E, AWriteThatReachedTheMasterIsNotRetriedButAReadIs) {
  FakeMaster failing(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the commit failed"));
  std::string dir = MakeTempDir("pl-cli-retry");
  std::string spec = dir + "/job.yaml";
  std::ofstream(spec) << JobSpec("maybe", "true");

  RunResult create = RunPaceline({"--addr", failing.address(), "--timeout", "5s", "job", "create",
                                  "-f", spec, "--pool", "/e2e"},
                                 dir);
  EXPECT_EQ(create.exit_code, 1);
  EXPECT_EQ(failing.creates(), 1);
  EXPECT_THAT(create.err, HasSubstr("may or may not have been made"));
  EXPECT_THAT(create.err, Not(HasSubstr("retrying")));

  RunResult get =
      RunPaceline({"--addr", failing.address(), "--timeout", "2s", "job", "get", "1"}, dir);
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_GE(failing.gets(), 3);
  EXPECT_THAT(get.err, HasSubstr(absl::StrCat("paceline: master ", failing.address(),
                                              " unavailable (the commit failed); retrying in")));
  EXPECT_THAT(get.err, HasSubstr("gave up after"));
  std::filesystem::remove_all(dir);
}

// A standby that names the leader (in its message, or in the paceline-leader trailer) sends
// reads and writes there when the leader is one of --addr; with one address the CLI fails at once
// and says where the leader is.
TEST(CliRetryE2E, AStandbysRedirectIsFollowedToAListedLeader) {
  TestCluster c({.agents = 0});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  std::string leader = c.master_address(0);
  FakeMaster by_message(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   absl::StrCat("this master is a standby; the leader (term 2) is at ", leader,
                                "; leader: ", leader)));
  FakeMaster by_trailer(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not the leader"),
                        leader);
  std::string spec = c.WriteFile("redirected.yaml", JobSpec("redirected", "true"));

  RunResult created =
      RunPaceline({"--addr", absl::StrCat(by_message.address(), ",", leader), "--token", c.token(),
                   "job", "create", "-f", spec, "--pool", "/e2e"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(by_message.creates(), 1);
  EXPECT_THAT(created.err, HasSubstr(absl::StrCat("paceline: master ", by_message.address(),
                                                  " unavailable (not the leader, leader: ", leader,
                                                  "); trying ", leader)));
  std::string id(absl::StripAsciiWhitespace(created.out));
  EXPECT_EQ(JobsNamed(c, "redirected"), std::vector<std::string>{id});

  RunResult got = RunPaceline({"--addr", absl::StrCat(by_trailer.address(), ",", leader), "--reads",
                               "leader", "--token", c.token(), "job", "get", id, "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(by_trailer.gets(), 1);
  EXPECT_EQ(Json::parse(got.out, nullptr, false)["job"].value("id", ""), id);

  absl::Time start = absl::Now();
  RunResult alone =
      RunPaceline({"--addr", by_message.address(), "--token", c.token(), "job", "get", id});
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_EQ(by_message.gets(), 1);
  EXPECT_THAT(alone.err, HasSubstr("leader: " + leader));
  EXPECT_THAT(alone.err, HasSubstr(absl::StrCat("--addr ", by_message.address(), ",", leader)));
}

}  // namespace
}  // namespace paceline::e2e
