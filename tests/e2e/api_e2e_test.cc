// End to end: the event stream (JobService.Watch, `paceline job watch`) and the JSON/HTTP view
// of the API, against a real master and a real agent.

#include <httplib.h>
#include <signal.h>

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";
constexpr char kJob[] = R"(
name: watched
instances: 5
task:
  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
)";

std::vector<Json> JsonLines(const std::string& text) {
  std::vector<Json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.push_back(Json::parse(line, nullptr, false));
  }
  return out;
}

bool HasJobState(const std::vector<Json>& events, uint64_t job, const std::string& state) {
  for (const Json& e : events) {
    if (e.contains("job") && e.value("job_id", "") == std::to_string(job) &&
        e["job"].value("state", "") == state) {
      return true;
    }
  }
  return false;
}

TEST(WatchE2E, EveryTransitionOfEveryInstanceArrivesOnceAndInOrder) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/w", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  Process watch = c.StartCli({"-o", "json", "job", "watch"});
  ASSERT_TRUE(WaitFor([&] { return watch.Stdout().find("started") != std::string::npos; },
                      absl::Seconds(30)))
      << watch.Output();

  uint64_t job = c.CreateJob("/w", kJob);
  ASSERT_EQ(c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return HasJobState(JsonLines(watch.Stdout()), job, "SUCCEEDED"); },
                      absl::Seconds(30)))
      << watch.Output();
  watch.Signal(SIGINT);
  watch.WaitExit(absl::Seconds(10));

  // Per instance: the states of run 1 in the order they arrived.
  std::map<uint32_t, std::vector<std::string>> states;
  for (const Json& e : JsonLines(watch.Stdout())) {
    ASSERT_FALSE(e.is_discarded()) << watch.Stdout();
    if (!e.contains("task") || e.value("job_id", "") != std::to_string(job)) continue;
    EXPECT_EQ(e["task"]["event"]["run"], 1);
    states[e["task"]["instance"].get<uint32_t>()].push_back(e["task"]["event"]["state"]);
  }
  ASSERT_EQ(states.size(), 5u) << watch.Stdout();
  for (const auto& [instance, seq] : states) {
    // A new job's instances are PENDING without an event (no per-instance records until they
    // are admitted).
    EXPECT_THAT(seq, ::testing::ElementsAre("READY", "PLACED", "LAUNCHING", "RUNNING", "SUCCEEDED"))
        << "instance " << instance;
  }

  // Watching a job that has ended prints where it stands and returns at once.
  RunResult one = c.Cli({"job", "watch", std::to_string(job)});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("SUCCEEDED=5"));

  RunResult missing = c.Cli({"job", "watch", "999"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("job 999 not found"));
}

TEST(JsonApiE2E, TheReadApiAnswersJsonWithTheSameAuthAndErrors) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/w", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  uint64_t job = c.CreateJob("/w", kJob);
  ASSERT_EQ(c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"}).exit_code, 0);
  std::string id = std::to_string(job);

  auto got = c.Http("GET", "/api/v1/JobService/GetJob?job_id=" + id);
  ASSERT_EQ(got.status, 200) << got.body;
  Json j = Json::parse(got.body);
  EXPECT_EQ(j["job"]["state"], "SUCCEEDED");
  EXPECT_EQ(j["job"]["task_counts"]["SUCCEEDED"], 5);

  auto tasks = c.Http("GET", "/api/v1/TaskService/ListTasks?job_id=" + id + "&states=SUCCEEDED");
  ASSERT_EQ(tasks.status, 200) << tasks.body;
  EXPECT_EQ(Json::parse(tasks.body)["tasks"].size(), 5u);
  EXPECT_EQ(Json::parse(tasks.body)["tasks"][0]["state"], "SUCCEEDED");  // the enum's name
  auto none = c.Http("GET", "/api/v1/TaskService/ListTasks?job_id=" + id + "&states=FAILED");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_TRUE(Json::parse(none.body)["tasks"].empty()) << none.body;
  auto bad = c.Http("GET", "/api/v1/TaskService/ListTasks?job_id=" + id + "&states=DONE");
  EXPECT_EQ(bad.status, 400) << bad.body;
  RunResult bad_cli = c.Cli({"task", "list", id, "--state", "done"});
  EXPECT_NE(bad_cli.exit_code, 0);
  EXPECT_THAT(bad_cli.err, HasSubstr("--state: unknown task state 'done'"));
  EXPECT_EQ(c.CliJson({"task", "list", id, "--state", "succeeded"})["tasks"].size(), 5u);

  auto pools = c.Http("POST", "/api/v1/PoolService/ListPools", "{}");
  ASSERT_EQ(pools.status, 200) << pools.body;
  EXPECT_THAT(pools.body, HasSubstr("\"/w\""));

  auto hosts = c.Http("GET", "/api/v1/HostService/ListHosts");
  ASSERT_EQ(hosts.status, 200) << hosts.body;
  EXPECT_EQ(Json::parse(hosts.body)["hosts"][0]["name"], c.agent_name(0));

  // The same errors as the gRPC API, with HTTP statuses.
  auto no_token = c.Http("GET", "/api/v1/JobService/GetJob?job_id=" + id, "", false);
  EXPECT_EQ(no_token.status, 401);
  EXPECT_EQ(Json::parse(no_token.body)["code"], "UNAUTHENTICATED");
  auto missing = c.Http("GET", "/api/v1/JobService/GetJob?job_id=999");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr("job 999 not found"));
  auto bad_param = c.Http("GET", "/api/v1/JobService/GetJob?id=1");
  EXPECT_EQ(bad_param.status, 400);
  EXPECT_THAT(bad_param.body, HasSubstr("job_id"));
  auto bad_body = c.Http("POST", "/api/v1/JobService/CreateJob", R"({"pool": "/w", "spec": 1})");
  EXPECT_EQ(bad_body.status, 400);
  auto bad_spec = c.Http("POST", "/api/v1/JobService/CreateJob",
                         R"({"pool": "/w", "spec_yaml": "name: x\ninstances: -1\n"})");
  EXPECT_EQ(bad_spec.status, 400);
  EXPECT_THAT(bad_spec.body, HasSubstr("instances"));
  auto write_by_get = c.Http("GET", "/api/v1/JobService/KillJob?job_id=" + id);
  EXPECT_EQ(write_by_get.status, 405);
  auto agent = c.Http("POST", "/api/v1/AgentService/Connect", "{}");
  EXPECT_EQ(agent.status, 404);
  // Nothing of that changed the cluster: still one job.
  auto list = c.Http("GET", "/api/v1/JobService/QueryJobs");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(Json::parse(list.body)["jobs"].size(), 1u);

  // Writes work with POST.
  auto created = c.Http("POST", "/api/v1/JobService/CreateJob",
                        Json{{"pool", "/w"}, {"spec_yaml", kJob}}.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_NE(Json::parse(created.body)["job_id"], "0");

  // The event stream as lines of JSON.
  std::string http = c.HttpAddress();
  httplib::Client client(http.substr(0, http.rfind(':')),
                         std::stoi(http.substr(http.rfind(':') + 1)));
  std::string streamed;
  auto res =
      client.Get(("/api/v1/JobService/Watch?job_id=" + id).c_str(),
                 {{"Authorization", "Bearer " + c.token()}}, [&](const char* data, size_t n) {
                   streamed.append(data, n);
                   return std::count(streamed.begin(), streamed.end(), '\n') < 2;
                 });
  std::vector<Json> lines = JsonLines(streamed);
  ASSERT_GE(lines.size(), 2u) << streamed;
  EXPECT_EQ(lines[0]["started"], true);
  EXPECT_EQ(lines[1]["job"]["state"], "SUCCEEDED");
}

}  // namespace
}  // namespace paceline::e2e
