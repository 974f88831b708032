#pragma once
// The fixture of the container tests (container_e2e_test.cc, gpu_container_e2e_test.cc): a
// real registry (Debian's docker-registry, over TLS with a CA of the test's own) holding a
// busybox image built in the test, a master and one agent that run it with crun, and the pool
// /c. Needs root and crun (skipped otherwise). Test-only.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "image/testing/image_builder.h"
#include "image/testing/registry_push.h"
#include "image/testing/registry_server.h"
#include "tests/e2e/cluster_fixture.h"
#include "tls/certificates.h"

namespace paceline::e2e {

using image::testing::RegistryServer;
using Json = nlohmann::json;

inline constexpr char kPool[] = R"(
description: containers
resources:
  cpu:    {reservation: 2, limit: 4}
  memory: {reservation: 2Gi}
)";

inline bool HaveCrun() { return ::access("/usr/bin/crun", X_OK) == 0; }

class ContainerE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || !HaveCrun()) GTEST_SKIP() << "needs root and crun";
    certs_dir_ = MakeTempDir("registry-certs");
    auto certs = tls::EnsureMasterCertificates(certs_dir_, {"127.0.0.1"});
    ASSERT_TRUE(certs.ok()) << certs.status();
    ca_ = certs->ca;
    auto registry = RegistryServer::Start({.cert_file = certs->cert, .key_file = certs->key});
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
    auto busybox = image::testing::BusyboxImage();
    ASSERT_TRUE(busybox.ok()) << busybox.status();
    image_ = *std::move(busybox);
    absl::Status pushed = image::testing::PushImage(
        {.registry = registry_->address(), .repository = "e2e/busybox", .ca_file = ca_}, image_,
        "1");
    ASSERT_TRUE(pushed.ok()) << pushed << "\n" << registry_->Log();
    ref_ = absl::StrCat(registry_->address(), "/e2e/busybox:1");
    ASSERT_NO_FATAL_FAILURE(StartCluster(
        {"--registry-ca", ca_, "--registry-timeout", "3s", "--container-host-path", certs_dir_}));
  }

  // A master and one agent started with `agent_args` (and `agent_env` in its environment),
  // and the pool /c (replaces the cluster).
  void StartCluster(std::vector<std::string> agent_args, std::vector<std::string> agent_env = {}) {
    cluster_.reset();
    cluster_ = std::make_unique<TestCluster>(ClusterOptions{
        .agents = 1, .agent_env = std::move(agent_env), .agent_args = std::move(agent_args)});
    RunResult r =
        cluster_->Cli({"pool", "create", "/c", "-f", cluster_->WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void TearDown() override {
    cluster_.reset();
    std::error_code ec;
    if (!certs_dir_.empty()) std::filesystem::remove_all(certs_dir_, ec);
  }

  // A one-instance batch job from `task` (YAML lines under task:, indented 2); {IMAGE} is
  // replaced by the pushed image's reference.
  uint64_t Job(const std::string& name, const std::string& task,
               const std::string& type = "batch") {
    std::string spec = absl::StrCat("name: ", name, "\ntype: ", type, "\ninstances: 1\ntask:\n",
                                    absl::StrReplaceAll(task, {{"{IMAGE}", ref_}}));
    return cluster_->CreateJob("/c", spec);
  }
  Json Task(uint64_t job) { return cluster_->CliJson({"task", "get", absl::StrCat(job, "/0")}); }
  bool WaitState(uint64_t job, const std::string& state, absl::Duration timeout) {
    return cluster_->WaitForJob(
        job, [&](const Json& j) { return j["state"] == state; }, timeout);
  }
  bool WaitTaskState(uint64_t job, const std::string& state, absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (Task(job)["task"]["state"] == state) return true;
      absl::SleepFor(absl::Milliseconds(200));
    }
    return false;
  }
  bool WaitHealthy(uint64_t job, absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (Task(job)["task"].value("health", "") == "HEALTHY") return true;
      absl::SleepFor(absl::Milliseconds(300));
    }
    return false;
  }
  std::string Logs(uint64_t job, bool err = false) {
    std::vector<std::string> args = {"task", "logs", absl::StrCat(job, "/0")};
    if (err) args.push_back("--stderr");
    return cluster_->Cli(args).out;
  }
  std::string Message(uint64_t job) {
    Json t = Task(job);
    return t["runs"].empty() ? std::string() : t["runs"].back().value("message", std::string());
  }

  std::string certs_dir_;
  std::string ca_;
  std::unique_ptr<RegistryServer> registry_;
  image::testing::Image image_;
  std::string ref_;
  std::unique_ptr<TestCluster> cluster_;
};

}  // namespace paceline::e2e
