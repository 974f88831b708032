#include "agent/base/launch_request.h"

#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(LaunchRequestTest, AcceptsAReasonableRequest) {
  LaunchRequest r = testing::Req(1, 0, 1, "echo hi");
  r.spec.ports = {"http", "admin_api"};
  HealthSpec h;
  h.check = HttpCheck{"http", "/"};
  r.spec.health = h;
  EXPECT_TRUE(ValidateLaunchRequest(r).ok());
  EXPECT_EQ(PortEnvSuffix("admin-api"), "ADMIN_API");
}

TEST(LaunchRequestTest, ASecretWithoutItsValueOrWithTheMastersErrorFailsTheLaunch) {
  LaunchRequest r = testing::Req(1, 0, 1, "true");
  r.spec.secrets = {{"db-password", "DB_PASSWORD", ""}, {"tls-key", "", "tls.key"}};
  absl::Status missing = ValidateLaunchRequest(r);
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("no value for secret db-password"), std::string::npos);
  r.secret_values = {{"db-password", "x"}, {"tls-key", "y"}};
  EXPECT_TRUE(ValidateLaunchRequest(r).ok());
  r.secret_error = "secret tls-key is not in /ads";
  EXPECT_NE(ValidateLaunchRequest(r).message().find("secret tls-key is not in /ads"),
            std::string::npos);
  r.secret_error.clear();
  r.spec.secrets[1].file = "../escape";
  EXPECT_EQ(ValidateLaunchRequest(r).code(), absl::StatusCode::kInvalidArgument);
}

TEST(LaunchRequestTest, RejectsWhatCanNeverRun) {
  auto code = [](LaunchRequest r) { return ValidateLaunchRequest(r).code(); };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  LaunchRequest r = testing::Req(1, 0, 1, "");
  EXPECT_EQ(code(r), kBad);
  r.spec.command = "true";
  r.spec.ports = {"a b"};
  EXPECT_EQ(code(r), kBad);
  r.spec.ports = {"a-b", "a_b"};  // both become PACELINE_PORT_A_B
  EXPECT_EQ(code(r), kBad);
  r.spec.ports = {"http"};
  HealthSpec h;
  h.check = TcpCheck{"grpc"};
  r.spec.health = h;
  EXPECT_EQ(code(r), kBad);
  r.spec.health.reset();
  r.spec.readiness = h;  // the same checks as health, named as readiness
  absl::Status readiness = ValidateLaunchRequest(r);
  EXPECT_EQ(readiness.code(), kBad);
  EXPECT_NE(readiness.message().find("readiness check uses port 'grpc'"), std::string::npos)
      << readiness;
  r.spec.readiness->check = CommandCheck{""};
  EXPECT_NE(ValidateLaunchRequest(r).message().find("empty readiness check command"),
            std::string::npos);
  r.spec.readiness->check = TcpCheck{"http"};
  r.spec.readiness->interval = absl::ZeroDuration();
  EXPECT_NE(ValidateLaunchRequest(r).message().find("readiness interval and timeout"),
            std::string::npos);
  r.spec.readiness->interval = absl::Seconds(1);
  EXPECT_TRUE(ValidateLaunchRequest(r).ok());
  r.spec.readiness.reset();
  r.spec.env = {{"A=B", "x"}};
  EXPECT_EQ(code(r), kBad);
  r.spec.env.clear();
  r.ports = {{"other", 31000}};
  EXPECT_EQ(code(r), kBad);
  r.ports.clear();
  r.spec.kill_grace = absl::Seconds(-1);
  EXPECT_EQ(code(r), kBad);
}

}  // namespace
}  // namespace paceline::agent
