// AccessServiceImpl's join tokens (access_service.h): made with CreateToken's `join`, used once
// by JoinHost (also when many present one at the same moment), refused when expired, revoked,
// for another host or not a join token, left unused by a bad request; a renewal needs the
// certificate its agent token names (tests/e2e/join_e2e_test.cc renews); RevokeHostCertificate
// revokes the agent tokens a join made. The signing is a stand-in (tls/join_test.cc tests the
// real one).

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/access_service.h"

namespace paceline::api {
namespace {

// Tokens in memory; PutToken is durable at once.
class MemoryRecords final : public AccessRecords {
 public:
  std::optional<records::TokenRecord> FindToken(const std::string& id) const override {
    absl::MutexLock lock(&mu_);
    auto it = tokens_.find(id);
    if (it == tokens_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<records::TokenRecord> ListTokens() const override {
    absl::MutexLock lock(&mu_);
    std::vector<records::TokenRecord> out;
    for (const auto& [id, t] : tokens_) out.push_back(t);
    return out;
  }
  absl::Status PutToken(records::TokenRecord token) override {
    absl::MutexLock lock(&mu_);
    ++puts_;
    tokens_[token.id] = std::move(token);
    return absl::OkStatus();
  }
  void Audit(records::AuditRecord) override {}
  absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(const records::AuditQuery&) override {
    return std::vector<records::AuditRecord>();
  }
  int puts() const {
    absl::MutexLock lock(&mu_);
    return puts_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, records::TokenRecord> tokens_;
  int puts_ = 0;
};

HostCertificates FakeCertificates() {
  HostCertificates c;
  c.ca_pem = "CA";
  c.ca_hash = "sha256:" + std::string(64, 'a');
  auto serial = std::make_shared<std::atomic<int>>(0);
  c.sign = [serial](const std::string& host,
                    const std::string& csr) -> absl::StatusOr<HostCertificates::Signed> {
    if (csr != "csr for " + host) return absl::InvalidArgumentError("csr: not for " + host);
    return HostCertificates::Signed{"CERT " + host, absl::StrCat("AB", ++*serial),
                                    absl::Now() + absl::Hours(1)};
  };
  return c;
}

class JoinTokenTest : public ::testing::Test {
 protected:
  // Runs `handler` as the interceptor would: the call begins (with `authorization`), then ends.
  template <typename Handler>
  grpc::Status Call(const std::string& method, Handler handler) {
    grpc::ServerContext ctx;
    access_.BeginCall(&ctx, method, absl::StrCat("Bearer ", kAdmin), "127.0.0.1:1", "r");
    grpc::Status s = handler(&ctx);
    std::optional<grpc::Status> instead = access_.EndCall(&ctx, s);
    return instead.has_value() ? *instead : s;
  }

  v1::CreateTokenResponse CreateJoin(const std::string& user, int64_t seconds = 0) {
    v1::CreateTokenRequest req;
    req.set_user(user);
    req.set_role("agent");
    req.set_join(true);
    req.set_expires_in_seconds(seconds);
    v1::CreateTokenResponse resp;
    grpc::Status s = Call("/paceline.v1.AccessService/CreateToken", [&](grpc::ServerContext* ctx) {
      return service_.CreateToken(ctx, &req, &resp);
    });
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  grpc::Status Join(const std::string& token, const std::string& host, v1::JoinHostResponse* resp,
                    const std::string& csr = "") {
    v1::JoinHostRequest req;
    req.set_token(token);
    req.set_host(host);
    req.set_csr_pem(csr.empty() ? "csr for " + host : csr);
    return Call("/paceline.v1.AccessService/JoinHost",
                [&](grpc::ServerContext* ctx) { return service_.JoinHost(ctx, &req, resp); });
  }

  static constexpr char kAdmin[] = "admin-secret-of-this-test";
  MemoryRecords records_;
  AccessControl access_{
      {{kAdmin, access::Principal{"admin", "", access::Role::kAdmin, "/", "b"}}}, &records_, {}};
  AccessServiceImpl service_{&access_, FakeCertificates()};
};

TEST_F(JoinTokenTest, AJoinTokenIsPrintedWithTheCaHashAndServesOnce) {
  v1::CreateTokenResponse made = CreateJoin("*");
  EXPECT_EQ(made.ca_hash(), "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(made.info().role(), "join");
  // One hour by default.
  EXPECT_NEAR(made.info().expires_at_unix_ms() - absl::ToUnixMillis(absl::Now()), 3600 * 1000,
              5000);
  // Before its use, the join token authenticates no call.
  EXPECT_TRUE(absl::StrContains(
      access_.Authenticate(absl::StrCat("Bearer ", made.token()), absl::Now()).status().message(),
      "is a join token"));
  v1::JoinHostResponse first;
  grpc::Status s = Join(made.token(), "node-1", &first);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(first.cert_pem(), "CERT node-1");
  EXPECT_EQ(first.ca_pem(), "CA");
  // The agent token made with it: role agent for node-1, named after the certificate's serial.
  std::optional<records::TokenRecord> agent = records_.FindToken(first.agent_token().substr(4, 16));
  ASSERT_TRUE(agent.has_value());
  EXPECT_EQ(agent->role, "agent");
  EXPECT_EQ(agent->user, "node-1");
  EXPECT_EQ(agent->scope, "node-1");
  EXPECT_EQ(agent->name, "cert:" + first.serial());
  // The agent token authenticates as node-1's agent.
  absl::StatusOr<access::Principal> who =
      access_.Authenticate(absl::StrCat("Bearer ", first.agent_token()), absl::Now());
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->role, access::Role::kAgent);
  // Used: refused, and nothing more is written.
  const int puts = records_.puts();
  v1::JoinHostResponse second;
  s = Join(made.token(), "node-2", &second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "a join token serves once"))
      << s.error_message();
  EXPECT_EQ(records_.puts(), puts);
  EXPECT_TRUE(second.cert_pem().empty());
}

TEST_F(JoinTokenTest, ARenewalNeedsTheCertificateItsAgentTokenNames) {
  v1::JoinHostResponse joined;
  ASSERT_TRUE(Join(CreateJoin("*").token(), "node-1", &joined).ok());
  // Over a connection without that client certificate (here: none), the joined agent token
  // buys nothing, and stays valid.
  v1::JoinHostResponse resp;
  grpc::Status s = Join(joined.agent_token(), "node-1", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "needs the certificate it was made with"))
      << s.error_message();
  s = Join(joined.agent_token(), "node-2", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(
      access_.Authenticate(absl::StrCat("Bearer ", joined.agent_token()), absl::Now()).ok());
}

TEST_F(JoinTokenTest, ManyAtOnceJoinOneHost) {
  v1::CreateTokenResponse made = CreateJoin("*");
  std::atomic<int> ok = 0, refused = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      v1::JoinHostResponse resp;
      grpc::Status s = Join(made.token(), absl::StrCat("racer-", i), &resp);
      (s.ok() ? ok : refused)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(refused, 15);
}

TEST_F(JoinTokenTest, ExpiredOtherHostsAndOrdinaryTokensAreRefused) {
  v1::CreateTokenResponse brief = CreateJoin("*", 1);
  std::optional<records::TokenRecord> r = records_.FindToken(brief.info().id());
  r->expires_at = absl::Now() - absl::Seconds(1);  // as if a second had passed
  ASSERT_TRUE(records_.PutToken(*r).ok());
  v1::JoinHostResponse resp;
  grpc::Status s = Join(brief.token(), "node-1", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "expired")) << s.error_message();

  v1::CreateTokenResponse only = CreateJoin("node-1");
  s = Join(only.token(), "node-2", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "is for host node-1")) << s.error_message();
  EXPECT_TRUE(Join(only.token(), "node-1", &resp).ok());  // the refusal did not use it

  v1::CreateTokenRequest plain;
  plain.set_user("node-3");
  plain.set_role("agent");
  v1::CreateTokenResponse agent;
  ASSERT_TRUE(Call("/paceline.v1.AccessService/CreateToken", [&](grpc::ServerContext* ctx) {
                return service_.CreateToken(ctx, &plain, &agent);
              }).ok());
  s = Join(agent.token(), "node-3", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "is not a join token")) << s.error_message();
  EXPECT_EQ(Join("plt_garbage", "node-3", &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(JoinTokenTest, ABadRequestLeavesTheTokenUnused) {
  v1::CreateTokenResponse made = CreateJoin("*");
  v1::JoinHostResponse resp;
  grpc::Status s = Join(made.token(), "node-1", &resp, "csr for someone else");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Join(made.token(), "bad name!", &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Join(made.token(), "node-1", &resp).ok());
}

TEST_F(JoinTokenTest, JoinTokensAreForAgentsOnly) {
  v1::CreateTokenRequest req;
  req.set_user("alice");
  req.set_role("viewer");
  req.set_join(true);
  v1::CreateTokenResponse resp;
  grpc::Status s = Call("/paceline.v1.AccessService/CreateToken", [&](grpc::ServerContext* ctx) {
    return service_.CreateToken(ctx, &req, &resp);
  });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(records_.ListTokens().empty());
}

TEST_F(JoinTokenTest, RevokingAHostsCertificatesRevokesTheirTokens) {
  v1::JoinHostResponse one, two;
  ASSERT_TRUE(Join(CreateJoin("*").token(), "node-1", &one).ok());
  ASSERT_TRUE(Join(CreateJoin("*").token(), "node-2", &two).ok());
  v1::RevokeHostCertificateRequest req;
  req.set_host("node-1");
  v1::RevokeHostCertificateResponse resp;
  grpc::Status s = Call(
      "/paceline.v1.AccessService/RevokeHostCertificate",
      [&](grpc::ServerContext* ctx) { return service_.RevokeHostCertificate(ctx, &req, &resp); });
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.serials_size(), 1);
  EXPECT_EQ(resp.serials(0), one.serial());
  EXPECT_FALSE(access_.Authenticate(absl::StrCat("Bearer ", one.agent_token()), absl::Now()).ok());
  EXPECT_TRUE(access_.Authenticate(absl::StrCat("Bearer ", two.agent_token()), absl::Now()).ok());
  req.set_host("node-9");
  resp.Clear();
  s = Call("/paceline.v1.AccessService/RevokeHostCertificate", [&](grpc::ServerContext* ctx) {
    return service_.RevokeHostCertificate(ctx, &req, &resp);
  });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace paceline::api
