// A service's endpoints with the real binary (docs/services.md, "Endpoints"): `job endpoints`
// lists a 3-instance service's instances, ready, at the ports their tasks hold; `job endpoints
// -w` follows an instance killed, a scale-up and the job's deletion (then ends by itself); the
// JSON gateway answers the same; a batch job and an unknown job get clear errors.

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kPool[] = R"(description: prod
resources:
  cpu: {reservation: 1, limit: 2}
  memory: {reservation: 1Gi}
)";

constexpr char kWeb[] = R"(name: web
type: service
instances: 3
task:
  command: "exec sleep 3600"
  ports: [http, admin]
  resources: {cpu: 0.1, memory: 32Mi}
  kill_grace: 1s
  deregistration_delay: 0s
)";

constexpr char kBatch[] = R"(name: crunch
instances: 1
task:
  command: "exec sleep 3600"
  resources: {cpu: 0.1, memory: 32Mi}
)";

// instance -> whether it is ready, of one list of endpoints.
std::map<int, bool> ReadyOf(const Json& list) {
  std::map<int, bool> out;
  for (const Json& e : list.value("endpoints", Json::array())) {
    out[e.value("instance", 0)] = e.value("ready", false);
  }
  return out;
}

int CountReady(const Json& list) {
  int n = 0;
  for (const auto& [i, ready] : ReadyOf(list)) n += ready ? 1 : 0;
  return n;
}

class EndpointsE2E : public ::testing::Test {
 protected:
  EndpointsE2E() : c_({.agents = 1, .master_args = {"--dns-listen", "127.0.0.1:0"}}) {}
  void SetUp() override {
    ASSERT_EQ(c_.Cli({"pool", "create", "/prod", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code,
              0);
    ASSERT_TRUE(c_.WaitForHosts(1));
  }
  // The lines a follower printed so far, parsed (the last may be incomplete: skipped).
  static std::vector<Json> Lines(const Process& p) {
    std::vector<Json> out;
    for (absl::string_view line : absl::StrSplit(p.Stdout(), '\n', absl::SkipEmpty())) {
      Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_discarded()) out.push_back(std::move(j));
    }
    return out;
  }
  // Waits until the follower's last list satisfies `pred`; that list.
  static Json WaitForLine(Process& p, const std::function<bool(const Json&)>& pred) {
    Json last;
    WaitFor(
        [&] {
          std::vector<Json> lines = Lines(p);
          if (lines.empty()) return false;
          last = lines.back();
          return pred(last);
        },
        absl::Seconds(60));
    return last;
  }

  TestCluster c_;
};

TEST_F(EndpointsE2E, ListsReadyInstancesAtTheirPortsAndFollowsChanges) {
  const uint64_t job = c_.CreateJob("/prod", kWeb);
  ASSERT_GT(job, 0u);
  const std::string id = std::to_string(job);

  // All three ready, each at the ports its task holds.
  Json list;
  ASSERT_TRUE(WaitFor(
      [&] {
        list = c_.CliJson({"job", "endpoints", id});
        return CountReady(list) == 3;
      },
      absl::Seconds(60)))
      << list.dump();
  EXPECT_EQ(list["dns_name"], "web.prod.paceline");
  EXPECT_NE(list["version"], "0");
  std::map<int, Json> ports;
  const Json tasks = c_.CliJson({"task", "list", id});
  for (const Json& t : tasks["tasks"]) ports[t.value("instance", 0)] = t["ports"];
  ASSERT_EQ(ports.size(), 3u) << tasks.dump();
  ASSERT_EQ(list["endpoints"].size(), 3u);
  for (const Json& e : list["endpoints"]) {
    const int i = e["instance"].get<int>();
    EXPECT_EQ(e["address"], "127.0.0.1");
    EXPECT_EQ(e["host"], c_.agent_name(0));
    EXPECT_EQ(e["why_not_ready"], "");
    ASSERT_EQ(e["ports"].size(), 2u) << e.dump();
    EXPECT_EQ(e["ports"]["http"], ports[i]["http"]) << "instance " << i;
    EXPECT_EQ(e["ports"]["admin"], ports[i]["admin"]) << "instance " << i;
  }
  // The table.
  RunResult table = c_.Cli({"job", "endpoints", id});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("web.prod.paceline"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("INSTANCE  ADDRESS    PORTS"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(absl::StrCat("admin=", ports[0]["admin"].get<int>(),
                                        ",http=", ports[0]["http"].get<int>())),
            std::string::npos)
      << table.out;
  // The JSON gateway: the same list.
  TestCluster::HttpResult http =
      c_.Http("GET", absl::StrCat("/api/v1/JobService/GetEndpoints?job_id=", id));
  ASSERT_EQ(http.status, 200) << http.body;
  EXPECT_EQ(CountReady(Json::parse(http.body)), 3) << http.body;

  // Following: the first list at once, then one per change.
  Process follow = c_.StartCli({"job", "endpoints", id, "-w", "-o", "json"});
  Json first = WaitForLine(follow, [](const Json& j) { return CountReady(j) == 3; });
  ASSERT_EQ(CountReady(first), 3) << follow.Output();

  // Instance 1 killed: it leaves the ready ones.
  ASSERT_EQ(c_.Cli({"task", "kill", absl::StrCat(id, "/1")}).exit_code, 0);
  Json killed = WaitForLine(follow, [](const Json& j) {
    std::map<int, bool> r = ReadyOf(j);
    return CountReady(j) == 2 && !r[1];
  });
  EXPECT_EQ(CountReady(killed), 2) << follow.Output();
  EXPECT_FALSE(ReadyOf(killed)[1]) << killed.dump();

  // Scaled to 5: instances 3 and 4 join once they run.
  RunResult up = c_.Cli({"job", "update", id, "--instances", "5"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  Json scaled = WaitForLine(follow, [](const Json& j) {
    std::map<int, bool> r = ReadyOf(j);
    return r[3] && r[4];
  });
  EXPECT_GE(CountReady(scaled), 4) << follow.Output();
  std::vector<Json> lines = Lines(follow);
  std::set<std::string> versions;
  for (const Json& l : lines) versions.insert(l["version"].get<std::string>());
  EXPECT_EQ(versions.size(), lines.size()) << "a list is printed once per change";

  // The job killed and deleted: the follower says so and ends by itself.
  ASSERT_EQ(c_.Cli({"job", "kill", id}).exit_code, 0);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "KILLED"; }, absl::Seconds(60)));
  ASSERT_EQ(c_.Cli({"job", "delete", id}).exit_code, 0);
  std::optional<int> exit = follow.WaitExit(absl::Seconds(10));
  ASSERT_TRUE(exit.has_value()) << follow.Output();
  EXPECT_EQ(*exit, 0) << follow.Output();
  std::vector<Json> all = Lines(follow);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back()["deleted"], true) << follow.Output();
}

TEST_F(EndpointsE2E, ABatchJobAndAnUnknownJobAreRefusedClearly) {
  const uint64_t batch = c_.CreateJob("/prod", kBatch);
  ASSERT_GT(batch, 0u);
  for (bool follow : {false, true}) {
    std::vector<std::string> args = {"job", "endpoints", std::to_string(batch)};
    if (follow) args.push_back("-w");
    RunResult r = c_.Cli(args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(absl::StrCat("job ", batch,
                                      " is a batch job: only service and stateful jobs have "
                                      "endpoints")),
              std::string::npos)
        << r.err;
  }
  RunResult unknown = c_.Cli({"job", "endpoints", "999"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("job 999 not found"), std::string::npos) << unknown.err;
  TestCluster::HttpResult http = c_.Http("GET", "/api/v1/JobService/GetEndpoints?job_id=999");
  EXPECT_EQ(http.status, 404) << http.body;
  EXPECT_NE(http.body.find("NOT_FOUND"), std::string::npos) << http.body;
  http = c_.Http("GET", absl::StrCat("/api/v1/JobService/WatchEndpoints?job_id=", batch));
  EXPECT_EQ(http.status, 400) << http.body;
  EXPECT_NE(http.body.find("FAILED_PRECONDITION"), std::string::npos) << http.body;
  http = c_.Http("GET", "/api/v1/JobService/GetEndpoints?job_id=0");
  EXPECT_EQ(http.status, 400) << http.body;
  EXPECT_NE(http.body.find("job_id: expected a job id, got 0"), std::string::npos) << http.body;
}

}  // namespace
}  // namespace paceline::e2e
