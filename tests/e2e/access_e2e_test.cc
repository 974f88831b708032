// End to end: users and roles against a real master. The matrix calls every method of the API
// (through the JSON gateway, which goes through the gRPC server) with each kind of credential —
// admin, pool-admin on /a, submitter on /a, viewer, agent, none, expired, revoked — and checks
// who is allowed and who is refused, and that a refused call changed nothing. Then: scopes,
// owners and groups, agent credentials on the agent protocol, and the audit log.

#include <signal.h>

#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/grpc_agent_fleet.h"
#include "paceline/v1/access.pb.h"
#include "paceline/v1/cluster.pb.h"
#include "paceline/v1/host.pb.h"
#include "paceline/v1/job.grpc.pb.h"
#include "paceline/v1/pool.pb.h"
#include "paceline/v1/secret.pb.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";
constexpr char kJob[] =
    "name: j\ninstances: 1\ntask:\n  command: \"true\"\n"
    "  resources: {cpu: 0.1, memory: 16Mi}\n";

struct Answer {
  int status = 0;
  std::string body;
};

// A master without agents, pools /a and /b, and a token of each kind.
class AccessE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"/a", "/b"}) {
      ASSERT_EQ(c_.Cli({"pool", "create", p, "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code, 0);
    }
    tokens_["admin"] = c_.token();
    tokens_["pool-admin"] = NewToken({"--user", "pat", "--role", "pool-admin", "--pool", "/a"});
    tokens_["submitter"] =
        NewToken({"--user", "sam", "--role", "submitter", "--pool", "/a", "--group", "ads"});
    tokens_["viewer"] = NewToken({"--user", "vic", "--role", "viewer"});
    tokens_["viewer-b"] = NewToken({"--user", "bea", "--role", "viewer", "--pool", "/b"});
    tokens_["agent"] = c_.agent_token();
    tokens_["none"] = "";
    tokens_["expired"] = NewToken({"--user", "old", "--role", "admin", "--expires", "1s"});
    std::string revoked = NewToken({"--user", "gone", "--role", "admin"});
    tokens_["revoked"] = revoked;
    // plt_<id>_<secret>
    std::vector<std::string> parts = absl::StrSplit(revoked, '_');
    ASSERT_EQ(parts.size(), 3u);
    ASSERT_EQ(c_.Cli({"token", "revoke", parts[1]}).exit_code, 0);
    absl::SleepFor(absl::Milliseconds(1100));  // the 1 s token has expired
  }

  std::string NewToken(std::vector<std::string> args) {
    args.insert(args.begin(), {"token", "create"});
    Json j = c_.CliJson(args);
    EXPECT_TRUE(j.contains("token")) << j.dump();
    return j.value("token", "");
  }

  Answer Call(const std::string& who, const std::string& method, const Json& body) {
    std::string http = c_.HttpAddress();
    httplib::Client client(http.substr(0, http.rfind(':')),
                           std::stoi(http.substr(http.rfind(':') + 1)));
    httplib::Headers headers;
    if (!tokens_.at(who).empty()) headers.emplace("Authorization", "Bearer " + tokens_.at(who));
    auto res = client.Post(("/api/v1/" + method).c_str(), headers, body.dump(), "application/json");
    if (!res) return {};
    return {res->status, res->body};
  }

  // What the store holds, as the admin reads it (the audit log aside).
  std::string Snapshot() {
    std::string out;
    for (const char* m :
         {"PoolService/ListPools", "JobService/QueryJobs", "AccessService/ListTokens",
          "HostService/ListHosts", "SecretService/ListSecrets"}) {
      Answer a = Call("admin", m, Json::object());
      EXPECT_EQ(a.status, 200) << m << ": " << a.body;
      out += a.body;
    }
    return out;
  }

  uint64_t NewJob(const std::string& pool, const std::string& who = "admin") {
    Answer a = Call(who, "JobService/CreateJob", {{"pool", pool}, {"spec_yaml", kJob}});
    EXPECT_EQ(a.status, 200) << a.body;
    return std::stoull(Json::parse(a.body).value("job_id", "0"));
  }

  TestCluster c_{ClusterOptions{.agents = 0}};
  std::map<std::string, std::string> tokens_;
};

// The roles in the order of a row's letters: A allowed, D denied (403), U unauthenticated (401).
// pool-admin and submitter are on /a, viewer on /, viewer-b on /b; the jobs are in /a.
const std::vector<std::string> kRoles = {"admin", "pool-admin", "submitter", "viewer", "viewer-b",
                                         "agent", "none",       "expired",   "revoked"};

struct Row {
  std::string method;
  std::string expect;  // one letter per role of kRoles
  std::function<Json(uint64_t job, int n)> body;
};

TEST_F(AccessE2E, EveryMethodTimesEveryRole) {
  auto job = [](uint64_t j, int) { return Json{{"job_id", j}}; };
  auto task = [](uint64_t j, int) { return Json{{"job_id", j}, {"instance", 0}}; };
  auto none = [](uint64_t, int) { return Json::object(); };
  const std::vector<Row> rows = {
      {"AccessService/WhoAmI", "AAAAADUUU", none},
      {"AccessService/CreateToken", "ADDDDDUUU",
       [](uint64_t, int n) {
         return Json{{"user", absl::StrCat("u", n)}, {"role", "viewer"}};
       }},
      {"AccessService/ListTokens", "ADDDDDUUU", none},
      {"AccessService/RevokeToken", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"id", "x"}};
       }},
      {"AccessService/ListAudit", "ADDDDDUUU", none},
      // The CA is public; a join is authenticated by the join token in the request (here none
      // that holds), whatever the caller; revoking a host's certificates is the admin's.
      {"AccessService/GetClusterCa", "AAAAAAAAA", none},
      {"AccessService/JoinHost", "UUUUUUUUU",
       [](uint64_t, int) {
         return Json{{"token", "plt_0123456789abcdef_00"}, {"host", "h"}};
       }},
      {"AccessService/RevokeHostCertificate", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"host", "h"}};
       }},
      {"ClusterService/GetInfo", "AAAAAAAAA", none},
      {"ClusterService/GetHistory", "AAAAADUUU",
       [](uint64_t, int) {
         return Json{{"pool", "/a"}};
       }},
      {"HostService/ListHosts", "AAAAADUUU", none},
      {"HostService/DrainHost", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"host", "h"}};
       }},
      {"HostService/DownHost", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"host", "h"}};
       }},
      {"HostService/UpHost", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"host", "h"}};
       }},
      {"PoolService/CreatePool", "AADDDDUUU",
       [](uint64_t, int n) {
         return Json{{"path", absl::StrCat("/a/new", n)}, {"spec_yaml", kPool}};
       }},
      {"PoolService/GetPool", "AAAAADUUU",
       [](uint64_t, int) {
         return Json{{"path", "/a"}};
       }},
      {"PoolService/UpdatePool", "ADDDDDUUU",
       [](uint64_t, int) {
         return Json{{"path", "/a"}, {"spec_yaml", kPool}};
       }},
      {"PoolService/DeletePool", "AADDDDUUU",
       [](uint64_t, int) {
         return Json{{"path", "/a/none"}};
       }},
      {"PoolService/ListPools", "AAAAADUUU", none},
      // Readers of any pool may ask; they are shown only the usage of pools they read.
      {"PoolService/GetUsage", "AAAAADUUU", none},
      {"JobService/CreateJob", "AAADDDUUU",
       [](uint64_t, int) {
         return Json{{"pool", "/a"}, {"spec_yaml", kJob}};
       }},
      {"JobService/GetJob", "AAAADDUUU", job},
      // The job is a batch job: readers get its FAILED_PRECONDITION, others their refusal.
      {"JobService/GetEndpoints", "AAAADDUUU", job},
      {"JobService/QueryJobs", "AAAAADUUU", none},
      {"JobService/KillJob", "AADDDDUUU", job},
      {"JobService/DeleteJob", "AADDDDUUU", job},
      {"JobService/RestartJob", "AADDDDUUU", job},
      // Readers of any pool may ask; they are shown only the archived jobs of pools they read.
      {"JobService/GetArchivedJob", "AAAAADUUU", job},
      {"JobService/QueryArchive", "AAAAADUUU", none},
      {"JobService/UpdateJob", "AADDDDUUU",
       [](uint64_t j, int) {
         return Json{{"job_id", j}, {"version", 1}, {"spec_yaml", kJob}};
       }},
      {"JobService/GetUpdate", "AAAADDUUU", job},
      {"JobService/ListUpdates", "AAAADDUUU", job},
      {"JobService/PauseUpdate", "AADDDDUUU", job},
      {"JobService/ResumeUpdate", "AADDDDUUU", job},
      {"JobService/AbortUpdate", "AADDDDUUU", job},
      {"JobService/RollbackJob", "AADDDDUUU", job},
      {"TaskService/ListTasks", "AAAADDUUU", job},
      {"TaskService/GetTask", "AAAADDUUU", task},
      {"TaskService/ListTaskEvents", "AAAADDUUU", task},
      {"TaskService/GetTaskLogs", "AAAADDUUU", task},
      {"TaskService/KillTask", "AADDDDUUU", task},
      {"TaskService/ReleaseVolume", "AADDDDUUU", task},
      // A pool-admin manages the secrets of its scope's root too (unlike the pool itself).
      {"SecretService/PutSecret", "AADDDDUUU",
       [](uint64_t, int n) {
         return Json{{"path", absl::StrCat("/a/s", n)}, {"value", "c2VjcmV0"}};
       }},
      {"SecretService/ListSecrets", "AAAADDUUU",
       [](uint64_t, int) {
         return Json{{"pool", "/a"}};
       }},
      {"SecretService/DeleteSecret", "AADDDDUUU",
       [](uint64_t, int) {
         return Json{{"path", "/a/none"}};
       }},
      {"SecretService/RekeySecrets", "ADDDDDUUU", none},
  };
  int n = 0;
  for (const Row& row : rows) {
    // A fresh job of the admin's in /a: the submitter (sam) is not its owner.
    const uint64_t j = NewJob("/a");
    // The refusals first, then the allowed ones, most scoped first: an allowed call may change
    // what the next one finds (a deleted job), never what a refusal is about.
    std::vector<size_t> order;
    for (size_t i = kRoles.size(); i-- > 0;) {
      if (row.expect[i] != 'A') order.push_back(i);
    }
    for (size_t i = kRoles.size(); i-- > 0;) {
      if (row.expect[i] == 'A') order.push_back(i);
    }
    for (size_t i : order) {
      const std::string& role = kRoles[i];
      const std::string before = row.expect[i] == 'A' ? "" : Snapshot();
      Answer a = Call(role, row.method, row.body(j, n++));
      const std::string where = absl::StrCat(row.method, " as ", role, ": ", a.status, " ", a.body);
      switch (row.expect[i]) {
        case 'A':
          EXPECT_NE(a.status, 401) << where;
          EXPECT_NE(a.status, 403) << where;
          EXPECT_NE(a.status, 0) << where;
          break;
        case 'D':
          EXPECT_EQ(a.status, 403) << where;
          EXPECT_THAT(a.body, HasSubstr("may not")) << where;
          EXPECT_EQ(Snapshot(), before) << where;
          break;
        case 'U':
          EXPECT_EQ(a.status, 401) << where;
          EXPECT_EQ(Snapshot(), before) << where;
          break;
      }
    }
  }
  // Every method of the API is in the matrix, but the two streams (tests below).
  std::set<std::string> covered;
  for (const Row& r : rows) covered.insert(r.method);
  EXPECT_EQ(covered.size(), rows.size());
  // Referencing one message of each file links its descriptors in.
  (void)v1::WhoAmIRequest::descriptor();
  (void)v1::GetInfoRequest::descriptor();
  (void)v1::ListHostsRequest::descriptor();
  (void)v1::GetJobRequest::descriptor();
  (void)v1::GetPoolRequest::descriptor();
  (void)v1::ListSecretsRequest::descriptor();
  for (const auto& entry : std::filesystem::directory_iterator(PACELINE_PROTO_DIR)) {
    const google::protobuf::FileDescriptor* file =
        google::protobuf::DescriptorPool::generated_pool()->FindFileByName(
            "paceline/v1/" + entry.path().filename().string());
    ASSERT_NE(file, nullptr) << entry.path();
    for (int i = 0; i < file->service_count(); ++i) {
      for (int m = 0; m < file->service(i)->method_count(); ++m) {
        const std::string name =
            absl::StrCat(file->service(i)->name(), "/", file->service(i)->method(m)->name());
        // The streams: tested below, Exec's refusals in exec_e2e_test.cc; WatchEndpoints has
        // GetEndpoints's entry in the permission table (access/permissions.cc).
        if (name == "JobService/Watch" || name == "AgentService/Connect" ||
            name == "TaskService/Exec" || name == "JobService/WatchEndpoints") {
          continue;
        }
        EXPECT_TRUE(covered.contains(name)) << name << " is not in the matrix";
      }
    }
  }
}

TEST_F(AccessE2E, DenialsNameTheUserTheActionAndThePoolAndOwnersAreKept) {
  const uint64_t mine = NewJob("/a", "submitter");
  const uint64_t admins = NewJob("/a");
  // The job records its submitting user and group.
  Answer got = Call("admin", "JobService/GetJob", {{"job_id", mine}});
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(Json::parse(got.body)["job"]["owner"], "sam");
  EXPECT_EQ(Json::parse(got.body)["job"]["owner_group"], "ads");
  // sam kills its own job, not the admin's; the message says whose it is.
  EXPECT_EQ(Call("submitter", "JobService/KillJob", {{"job_id", mine}}).status, 200);
  Answer theirs = Call("submitter", "JobService/KillJob", {{"job_id", admins}});
  EXPECT_EQ(theirs.status, 403);
  EXPECT_THAT(theirs.body, HasSubstr(absl::StrCat("sam (submitter on /a) may not kill jobs in /a: "
                                                  "job ",
                                                  admins, " belongs to admin")));
  // Outside its subtree: the pool is named.
  Answer elsewhere =
      Call("submitter", "JobService/CreateJob", {{"pool", "/b"}, {"spec_yaml", kJob}});
  EXPECT_EQ(elsewhere.status, 403);
  EXPECT_THAT(elsewhere.body, HasSubstr("sam (submitter on /a) may not submit jobs in /b"));
  Answer pool =
      Call("pool-admin", "PoolService/CreatePool", {{"path", "/b/x"}, {"spec_yaml", kPool}});
  EXPECT_THAT(pool.body, HasSubstr("pat (pool-admin on /a) may not create pools in /b/x"));
  // Another of sam's group may act on sam's jobs.
  tokens_["teammate"] =
      NewToken({"--user", "tess", "--role", "submitter", "--pool", "/a", "--group", "ads"});
  EXPECT_EQ(Call("teammate", "JobService/RestartJob", {{"job_id", mine}}).status, 200);
  // A scoped viewer sees only its subtree in listings.
  NewJob("/b");
  Answer listed = Call("viewer-b", "JobService/QueryJobs", Json::object());
  ASSERT_EQ(listed.status, 200);
  const Json jobs = Json::parse(listed.body)["jobs"];
  for (const Json& j : jobs) EXPECT_EQ(j["pool"], "/b");
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_EQ(Call("viewer-b", "JobService/GetJob", {{"job_id", mine}}).status, 403);
  // whoami, through the CLI.
  RunResult who =
      RunPaceline({"--addr", c_.master_address(0), "--token", tokens_["submitter"], "whoami"});
  EXPECT_EQ(who.exit_code, 0) << who.err;
  EXPECT_THAT(who.out, HasSubstr("sam (group ads): submitter on /a"));
  // A refused CLI command exits non-zero with the message.
  RunResult refused = RunPaceline({"--addr", c_.master_address(0), "--token", tokens_["viewer"],
                                   "job", "kill", std::to_string(admins)});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("vic (viewer on /) may not kill jobs in /a"));
}

TEST_F(AccessE2E, OnlyAgentCredentialsOpenTheAgentProtocolAndOnlyForTheirHost) {
  auto try_register = [&](const std::string& token, const std::string& host) {
    bench::GrpcFleetConfig config;
    config.master_addr = c_.master_address(0);
    config.token = token;
    config.hosts = bench::UniformHosts(1, host, bench::Capacity(1000, int64_t{1} << 30));
    absl::StatusOr<std::unique_ptr<bench::GrpcAgentFleet>> fleet =
        bench::GrpcAgentFleet::Start(std::move(config));
    EXPECT_TRUE(fleet.ok()) << fleet.status();
    absl::Status s = (*fleet)->WaitRegistered(absl::Seconds(3));
    (*fleet)->Stop();
    return s;
  };
  EXPECT_TRUE(try_register(c_.agent_token(), "any").ok());
  absl::Status admin = try_register(c_.token(), "adm");
  EXPECT_THAT(admin.message(), HasSubstr("PERMISSION_DENIED"));
  std::string h1 = NewToken({"--user", "h1-00000", "--role", "agent"});
  EXPECT_TRUE(try_register(h1, "h1").ok());  // registers as h1-00000
  absl::Status other = try_register(h1, "h2");
  EXPECT_THAT(other.message(), HasSubstr("PERMISSION_DENIED"));
  // The refused hosts never registered.
  Json hosts = c_.CliJson({"host", "list"})["hosts"];
  std::set<std::string> names;
  for (const Json& h : hosts) names.insert(h["name"]);
  EXPECT_EQ(names, (std::set<std::string>{"any-00000", "h1-00000"}));
  // An agent credential cannot read the API either.
  RunResult r =
      RunPaceline({"--addr", c_.master_address(0), "--token", c_.agent_token(), "pool", "list"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("may not list pools"));
}

TEST_F(AccessE2E, TheAuditLogHasEveryChangeWithItsUserAndEveryRefusal) {
  const uint64_t job = NewJob("/a", "submitter");
  ASSERT_EQ(Call("submitter", "JobService/KillJob", {{"job_id", job}}).status, 200);
  ASSERT_EQ(Call("viewer", "JobService/DeleteJob", {{"job_id", job}}).status, 403);
  ASSERT_EQ(Call("none", "PoolService/ListPools", Json::object()).status, 401);
  {  // Over gRPC, a client's own x-forwarded-for is not believed.
    auto stub = v1::JobService::NewStub(
        grpc::CreateChannel(c_.master_address(0), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + tokens_["viewer"]);
    ctx.AddMetadata("x-forwarded-for", "6.6.6.6");
    ctx.AddMetadata("x-request-id", "spoof-test-1");
    v1::KillJobRequest req;
    req.set_job_id(job);
    v1::KillJobResponse resp;
    EXPECT_EQ(stub->KillJob(&ctx, req, &resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(ctx.GetServerTrailingMetadata().find("paceline-request-id")->second, "spoof-test-1");
  }
  ASSERT_EQ(Call("admin", "PoolService/UpdatePool", {{"path", "/b"}, {"spec_yaml", kPool}}).status,
            200);
  // Records are written without waiting for them: poll.
  Json entries;
  ASSERT_TRUE(WaitFor(
      [&] {
        entries = c_.CliJson({"audit", "list"})["entries"];
        return entries.size() >= 13;  // setup: 2 pools, 4 tokens, a revoke; then 5 above
      },
      absl::Seconds(10)))
      << entries.dump(1);
  auto find = [&](const std::string& action, const std::string& user) {
    for (const Json& e : entries) {
      if (e["action"] == action && e["user"] == user) return e;
    }
    return Json();
  };
  Json created = find("JobService.CreateJob", "sam");
  EXPECT_EQ(created["outcome"], "OK");
  EXPECT_EQ(created["pool"], "/a");
  EXPECT_EQ(find("JobService.KillJob", "sam")["target"], absl::StrCat("job ", job));
  Json denied = find("JobService.DeleteJob", "vic");
  EXPECT_EQ(denied["outcome"], "PERMISSION_DENIED");
  EXPECT_THAT(denied["message"].get<std::string>(), HasSubstr("vic (viewer on /) may not"));
  EXPECT_THAT(denied["source"].get<std::string>(), HasSubstr("127.0.0.1"));
  EXPECT_EQ(find("PoolService.ListPools", "")["outcome"], "UNAUTHENTICATED");
  Json spoofed = find("JobService.KillJob", "vic");
  EXPECT_EQ(spoofed["request_id"], "spoof-test-1");
  EXPECT_THAT(spoofed["source"].get<std::string>(), HasSubstr("127.0.0.1"));
  EXPECT_EQ(find("PoolService.UpdatePool", "admin")["pool"], "/b");
  EXPECT_EQ(find("PoolService.CreatePool", "admin")["outcome"], "OK");
  EXPECT_EQ(find("AccessService.CreateToken", "admin")["outcome"], "OK");
  EXPECT_EQ(find("AccessService.RevokeToken", "admin")["outcome"], "OK");
  // Reads are not audited.
  EXPECT_TRUE(find("JobService.GetJob", "admin").is_null());
  // Filters: by user, by pool subtree; export as JSON lines.
  const Json sams = c_.CliJson({"audit", "list", "--user", "sam"})["entries"];
  EXPECT_FALSE(sams.empty());
  for (const Json& e : sams) EXPECT_EQ(e["user"], "sam");
  const Json in_b = c_.CliJson({"audit", "list", "--pool", "/b"})["entries"];
  EXPECT_FALSE(in_b.empty());
  for (const Json& e : in_b) EXPECT_EQ(e["pool"], "/b");
  RunResult exported = c_.Cli({"audit", "export", "--since", "1h"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(exported.out, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(Json::parse(line).contains("action")) << line;
    ++lines;
  }
  EXPECT_GE(lines, 12);
  // Only an admin reads it.
  EXPECT_EQ(Call("pool-admin", "AccessService/ListAudit", Json::object()).status, 403);
}

TEST_F(AccessE2E, RevokingATokenEndsTheWatchItOpened) {
  const std::string token = NewToken({"--user", "wat", "--role", "viewer"});
  std::vector<std::string> parts = absl::StrSplit(token, '_');
  auto stub = v1::JobService::NewStub(
      grpc::CreateChannel(c_.master_address(0), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + token);
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
      stub->Watch(&ctx, v1::WatchRequest());
  v1::WatchEvent event;
  ASSERT_TRUE(reader->Read(&event));
  ASSERT_TRUE(event.started());
  ASSERT_EQ(c_.Cli({"token", "revoke", parts[1]}).exit_code, 0);
  const absl::Time revoked = absl::Now();
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(absl::Now() - revoked, absl::Seconds(5));
  // And a new call with it is refused.
  tokens_["wat"] = token;
  EXPECT_EQ(Call("wat", "PoolService/ListPools", Json::object()).status, 401);
}

TEST_F(AccessE2E, TokensAreKeptOnlyAsHashesAndSurviveARestart) {
  std::string secret = tokens_["viewer"].substr(tokens_["viewer"].rfind('_') + 1);
  // The store file does not hold the secret.
  std::string db;
  for (const auto& f : std::filesystem::recursive_directory_iterator(c_.dir() + "/master")) {
    if (f.is_regular_file()) db += ReadFile(f.path().string());
  }
  EXPECT_EQ(db.find(secret), std::string::npos);
  // token list shows no secret, and the revoked and expired ones as such.
  RunResult list = c_.Cli({"token", "list"});
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_EQ(list.out.find(secret), std::string::npos);
  EXPECT_THAT(list.out, HasSubstr("REVOKED"));
  EXPECT_THAT(list.out, HasSubstr("EXPIRED"));
  // After a restart the tokens still work, and the revoked one is still refused.
  c_.master().Signal(SIGKILL);
  ASSERT_TRUE(c_.master().WaitExit(absl::Seconds(10)).has_value());
  c_.StartMaster();
  ASSERT_TRUE(
      WaitFor([&] { return Call("viewer", "PoolService/ListPools", Json::object()).status == 200; },
              absl::Seconds(20)));
  EXPECT_EQ(Call("revoked", "PoolService/ListPools", Json::object()).status, 401);
  Answer bad = Call("expired", "PoolService/ListPools", Json::object());
  EXPECT_THAT(bad.body, HasSubstr("expired at"));
}

}  // namespace
}  // namespace paceline::e2e
