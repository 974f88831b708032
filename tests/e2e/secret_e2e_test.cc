// Secrets end to end, with TLS on: a task reads its secret from a variable and from a file;
// afterwards no file of the cluster (store, logs, checkpoints, sandboxes), no API answer and no
// watched event holds the value. Who may put, list and use secrets, and the key's rotation.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kParent[] = "resources:\n  cpu: {reservation: 1}\n  memory: {reservation: 512Mi}\n";
constexpr char kLeaf[] = "resources:\n  cpu: {reservation: 0.5}\n  memory: {reservation: 256Mi}\n";

// The task prints digests of what it got, never the value itself.
constexpr char kReader[] = R"(
name: reader
instances: 1
task:
  command: >-
    printf %s "$DB_PASSWORD" | sha256sum;
    sha256sum < "$PACELINE_SECRETS/pw";
    stat -c 'mode %a' "$PACELINE_SECRETS/pw";
    stat -f -c 'fs %T' "$PACELINE_SECRETS"
  resources: {cpu: 0.1, memory: 32Mi}
  secrets:
    - {name: db-password, env: DB_PASSWORD}
    - {name: db-password, file: pw}
)";

std::string Sha256Of(const std::string& path) {
  std::string cmd = "sha256sum < '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  while (p != nullptr && ::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (p != nullptr) ::pclose(p);
  return out.substr(0, 64);
}

// Every regular file below `dir` that holds `needle`.
std::vector<std::string> FilesHolding(const std::string& dir, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) found.push_back(e.path().string());
  }
  return found;
}

class SecretE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c_.WaitForHosts(1));
    for (auto [path, spec] :
         {std::pair{"/ads", kParent}, std::pair{"/ads/x", kLeaf}, std::pair{"/search", kLeaf}}) {
      RunResult r = c_.Cli({"pool", "create", path, "-f", c_.WriteFile("pool.yaml", spec)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    std::mt19937_64 rng(std::random_device{}());
    value_ = absl::StrCat("pl-secret-", rng(), "-", rng());
  }

  // A client command with another token than the admin's.
  RunResult CliAs(const std::string& token, const std::vector<std::string>& args) {
    std::vector<std::string> full = {"--addr", c_.master_address(0), "--token", token,
                                     "--ca",   c_.ca_file()};
    full.insert(full.end(), args.begin(), args.end());
    return RunPaceline(full, c_.dir());
  }

  // Writes the value to a file outside the cluster's directory, runs `secret create` with it
  // (as the admin, or with `token`), and deletes the file.
  RunResult PutValue(const std::string& path, const std::string& value,
                     const std::string& token = "") {
    std::string file = absl::StrCat(::testing::TempDir(), "/pl-secret-", ::getpid());
    std::ofstream(file) << value;
    expected_sha_ = Sha256Of(file);
    std::vector<std::string> args = {"secret", "create", path, "--from-file", file};
    RunResult r = token.empty() ? c_.Cli(args) : CliAs(token, args);
    std::filesystem::remove(file);
    return r;
  }

  TestCluster c_{ClusterOptions{.agents = 1, .tls = true}};
  std::string value_;
  std::string expected_sha_;
};

TEST_F(SecretE2E, ATaskReadsItsSecretAndNothingElseEverHoldsTheValue) {
  // Events as they happen, for the whole test.
  Process watch = c_.StartCli({"job", "watch", "-o", "json"});
  RunResult put = PutValue("/ads/db-password", value_);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_THAT(put.out, HasSubstr("secret /ads/db-password created"));

  // The job in /ads/x finds the secret of /ads, the pool above it.
  const uint64_t job = c_.CreateJob("/ads/x", kReader);
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED" || j["state"] == "FAILED"; },
      absl::Seconds(60)));
  Json got = c_.CliJson({"job", "get", std::to_string(job)});
  ASSERT_EQ(got["job"]["state"], "SUCCEEDED") << got.dump();
  RunResult logs = c_.Cli({"task", "logs", absl::StrCat(job, "/0")});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  // The variable and the file both hold the value; the file is 0400, on a tmpfs of its own
  // when the agent may mount (root).
  size_t first = logs.out.find(expected_sha_);
  ASSERT_NE(first, std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find(expected_sha_, first + 1), std::string::npos) << logs.out;
  EXPECT_THAT(logs.out, HasSubstr("mode 400")) << logs.out;
  if (::geteuid() == 0) {
    EXPECT_THAT(logs.out, HasSubstr("fs tmpfs"));
  }
  // The run is over: its sandbox (kept for the logs) holds no secrets directory.
  bool left = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(c_.dir())) {
    left = left || e.path().filename() == "secrets";
  }
  EXPECT_FALSE(left) << "a secrets directory outlived its run";

  // The API's answers.
  std::string answers;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"job", "get", std::to_string(job)},
                                             {"task", "get", absl::StrCat(job, "/0")},
                                             {"task", "list", std::to_string(job)},
                                             {"task", "events", absl::StrCat(job, "/0")},
                                             {"secret", "list", "-r"},
                                             {"audit", "export"}}) {
    RunResult r = c_.Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    answers += r.out + r.err;
  }
  EXPECT_THAT(answers, HasSubstr("/ads/db-password"));
  EXPECT_THAT(answers, Not(HasSubstr(value_)));
  watch.Signal(SIGTERM);
  watch.WaitExit(absl::Seconds(10));
  EXPECT_THAT(watch.Output(), HasSubstr("SUCCEEDED"));
  EXPECT_THAT(watch.Output(), Not(HasSubstr(value_)));
  // Every file of the cluster: the store (and its write-ahead log), the master's and the
  // agent's logs and checkpoints, the sandboxes and the task's logs.
  EXPECT_THAT(FilesHolding(c_.dir(), value_), ::testing::IsEmpty());
}

TEST_F(SecretE2E, OnlyJobsOfThePoolsSubtreeUseASecretAndOnlyItsAdminsManageIt) {
  ASSERT_EQ(PutValue("/ads/db-password", value_).exit_code, 0);
  // Again without --replace: refused; with update: replaced.
  RunResult again = PutValue("/ads/db-password", "other");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("exists; give --replace"));
  // A job of another subtree cannot name it.
  RunResult sibling =
      c_.Cli({"job", "create", "-f", c_.WriteFile("job.yaml", kReader), "--pool", "/search"});
  EXPECT_NE(sibling.exit_code, 0);
  EXPECT_THAT(sibling.err, HasSubstr("task.secrets[0].name: no secret db-password in /search"));
  // Nor may one of its roles, or an instance's override.
  RunResult role = c_.Cli(
      {"job", "create", "-f",
       c_.WriteFile("roles.yaml",
                    "name: r\ntask: {command: 'true', resources: {cpu: 0.1, memory: 32Mi}}\n"
                    "roles:\n  - {name: plain, instances: 1}\n  - name: reader\n"
                    "    instances: 1\n    task: {secrets: [{name: db-password, env: PW}]}\n"),
       "--pool", "/search"});
  EXPECT_NE(role.exit_code, 0);
  EXPECT_THAT(role.err,
              HasSubstr("roles[1].task.secrets[0].name: no secret db-password in /search"));
  RunResult instance = c_.Cli(
      {"job", "create", "-f",
       c_.WriteFile("override.yaml",
                    "name: o\ninstances: 2\n"
                    "task: {command: 'true', resources: {cpu: 0.1, memory: 32Mi}}\n"
                    "instance_overrides:\n  1: {secrets: [{name: db-password, file: pw}]}\n"),
       "--pool", "/search"});
  EXPECT_NE(instance.exit_code, 0);
  EXPECT_THAT(instance.err,
              HasSubstr("instance_overrides.1.secrets[0].name: no secret db-password in /search"));
  // Roles: a pool-admin of /ads manages its secrets; a submitter of /ads may not; a viewer of
  // /search does not see them.
  auto token = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"token", "create"});
    return c_.CliJson(args).value("token", "");
  };
  const std::string admin_ads = token({"--user", "ann", "--role", "pool-admin", "--pool", "/ads"});
  const std::string sub_ads = token({"--user", "sam", "--role", "submitter", "--pool", "/ads"});
  const std::string view_search = token({"--user", "vic", "--role", "viewer", "--pool", "/search"});
  EXPECT_EQ(PutValue("/ads/x/api-key", "k", admin_ads).exit_code, 0);
  RunResult denied = PutValue("/ads/x/other", "k", sub_ads);
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_THAT(denied.err, HasSubstr("sam (submitter on /ads) may not put secrets in /ads/x"));
  // Both are in the audit log, with their users; the value is not.
  RunResult audit = c_.Cli({"audit", "list", "--pool", "/ads"});
  EXPECT_THAT(audit.out, ::testing::ContainsRegex("ann +[^ ]+ +SecretService.PutSecret +/ads/x "
                                                  "+secret /ads/x/api-key +OK"));
  EXPECT_THAT(audit.out, ::testing::ContainsRegex("sam +[^ ]+ +SecretService.PutSecret +/ads/x "
                                                  "+secret /ads/x/other +PERMISSION_DENIED"));
  RunResult outside = PutValue("/search/k", "k", admin_ads);
  EXPECT_THAT(outside.err, HasSubstr("may not put secrets in /search"));
  RunResult seen = CliAs(view_search, {"secret", "list"});
  EXPECT_EQ(seen.exit_code, 0) << seen.err;
  EXPECT_THAT(seen.out, Not(HasSubstr("/ads")));
  RunResult not_theirs = CliAs(view_search, {"secret", "list", "/ads"});
  EXPECT_THAT(not_theirs.err, HasSubstr("vic (viewer on /search) may not list secrets in /ads"));
  // A pool holding a secret is not deleted.
  RunResult pool_delete = c_.Cli({"pool", "delete", "/ads/x"});
  EXPECT_NE(pool_delete.exit_code, 0);
  EXPECT_THAT(pool_delete.err, HasSubstr("delete them first: paceline secret delete"));
  // Deleted after the job was created: the next run fails saying why.
  const uint64_t job = c_.CreateJob("/ads/x", kReader);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED"; }, absl::Seconds(60)));
  ASSERT_EQ(c_.Cli({"secret", "delete", "/ads/db-password"}).exit_code, 0);
  ASSERT_EQ(c_.Cli({"job", "restart", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "FAILED"; }, absl::Seconds(60)));
  RunResult events = c_.Cli({"task", "events", absl::StrCat(job, "/0")});
  EXPECT_THAT(events.out, HasSubstr("secret db-password is not in /ads/x or a pool above it"));
}

TEST_F(SecretE2E, ANewKeyResealsEverySecretAndTasksStillReadThem) {
  ASSERT_EQ(PutValue("/ads/db-password", value_).exit_code, 0);
  const std::string key_file = c_.dir() + "/master/secrets.key";
  Json before = c_.CliJson({"secret", "list", "/ads"});
  const std::string old_key = before["secrets"][0]["key_id"];
  RunResult added = RunPaceline({"secret", "new-key", "--key-file", key_file});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  Json rekeyed = c_.CliJson({"secret", "rekey"});
  EXPECT_EQ(rekeyed["resealed"], 1);
  EXPECT_NE(rekeyed["key_id"], old_key);
  Json after = c_.CliJson({"secret", "list", "/ads"});
  EXPECT_EQ(after["secrets"][0]["key_id"], rekeyed["key_id"]);
  // The old key's line can go now; a restarted master still opens the secret for a task.
  std::ifstream in(key_file);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.rfind(old_key, 0) != 0) kept += line + "\n";
  }
  in.close();
  std::ofstream(key_file, std::ios::trunc) << kept;
  c_.master().Signal(SIGTERM);
  ASSERT_EQ(c_.master().WaitExit(absl::Seconds(30)), 0);
  c_.StartMaster();
  ASSERT_TRUE(c_.WaitForHosts(1, absl::Seconds(60)));
  const uint64_t job = c_.CreateJob("/ads/x", kReader);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED" || j["state"] == "FAILED"; },
      absl::Seconds(60)));
  RunResult logs = c_.Cli({"task", "logs", absl::StrCat(job, "/0")});
  EXPECT_THAT(logs.out, HasSubstr(expected_sha_)) << logs.err;
}

}  // namespace
}  // namespace paceline::e2e
