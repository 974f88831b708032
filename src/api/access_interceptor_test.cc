// The gRPC interceptor with AccessControl on a real in-process server: a handler that forgets
// to check its caller answers nothing; one that checks is refused or answered as the table says.

#include "api/access_interceptor.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "common/answer_stamp.h"
#include "paceline/v1/cluster.grpc.pb.h"

namespace paceline::api {
namespace {

// GetHistory (any signed-in caller) forgets to check; GetInfo is public.
class Forgetful final : public v1::ClusterService::Service {
 public:
  explicit Forgetful(AccessControl* access) : access_(access) {}
  grpc::Status GetHistory(grpc::ServerContext* ctx, const v1::GetHistoryRequest* req,
                          v1::GetHistoryResponse* resp) override {
    if (req->pool() == "check") {
      if (grpc::Status s = access_->Check(ctx); !s.ok()) return s;
    }
    resp->set_period_ms(12345);  // what must not leak
    return grpc::Status::OK;
  }
  grpc::Status GetInfo(grpc::ServerContext* ctx, const v1::GetInfoRequest*,
                       v1::GetInfoResponse* resp) override {
    if (check_info) {
      if (grpc::Status s = access_->Check(ctx); !s.ok()) return s;
      ++committed;  // what a write would do before its answer
    }
    resp->set_version("v");
    return grpc::Status::OK;
  }
  // GetInfo checks its caller (a read a standby answers: access::Permission::followed).
  bool check_info = false;
  std::atomic<int64_t> committed{40};

 private:
  AccessControl* access_;
};

class AccessInterceptorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> i;
    i.push_back(NewAccessInterceptorFactory(&access_));
    builder.experimental().SetInterceptorCreators(std::move(i));
    server_ = builder.BuildAndStart();
    stub_ = v1::ClusterService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status History(const std::string& pool, const std::string& token,
                       v1::GetHistoryResponse* resp) {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    v1::GetHistoryRequest req;
    req.set_pool(pool);
    return stub_->GetHistory(&ctx, req, resp);
  }

  AccessControl access_{
      {{"secret", access::Principal{"root", "", access::Role::kAdmin, "/", "b"}}}, nullptr, Gate{}};
  Forgetful service_{&access_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ClusterService::Stub> stub_;
};

TEST_F(AccessInterceptorTest, AHandlerThatForgetsItsCheckAnswersNothing) {
  v1::GetHistoryResponse resp;
  grpc::Status s = History("", "secret", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(s.error_message(), testing::HasSubstr("did not check the caller's permission"));
  EXPECT_EQ(resp.period_ms(), 0);
}

TEST_F(AccessInterceptorTest, AHandlerThatChecksIsRefusedOrAnswered) {
  v1::GetHistoryResponse resp;
  EXPECT_EQ(History("check", "", &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(History("check", "wrong", &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(resp.period_ms(), 0);
  ASSERT_TRUE(History("check", "secret", &resp).ok());
  EXPECT_EQ(resp.period_ms(), 12345);
  // A public method needs no check and no token.
  grpc::ClientContext ctx;
  v1::GetInfoResponse info;
  ASSERT_TRUE(stub_->GetInfo(&ctx, v1::GetInfoRequest(), &info).ok());
  EXPECT_EQ(info.version(), "v");
  // Every answer names its request id.
  EXPECT_NE(ctx.GetServerTrailingMetadata().find("paceline-request-id"),
            ctx.GetServerTrailingMetadata().end());
}

// A gate as a standby's (masterd/core_keeper.h, Admit) or a leader's: the stamp reaches the
// caller's trailers; refusals, an unreached revision and a malformed one are answered as such.
class GatedTest : public ::testing::Test {
 protected:
  void Start(Gate gate) {
    access_ = std::make_unique<AccessControl>(
        std::vector<BootstrapCredential>{
            {"secret", access::Principal{"root", "", access::Role::kAdmin, "/", "b"}}},
        nullptr, std::move(gate));
    service_ = std::make_unique<Forgetful>(access_.get());
    service_->check_info = true;
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> i;
    i.push_back(NewAccessInterceptorFactory(access_.get()));
    builder.experimental().SetInterceptorCreators(std::move(i));
    server_ = builder.BuildAndStart();
    stub_ = v1::ClusterService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override { server_->Shutdown(); }

  // GetInfo with the token and `min_revision` (unless empty); the trailers' stamp in `stamp`.
  grpc::Status Info(const std::string& min_revision, std::map<std::string, std::string>* stamp) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer secret");
    if (!min_revision.empty()) ctx.AddMetadata(kMinRevisionKey, min_revision);
    v1::GetInfoResponse resp;
    grpc::Status s = stub_->GetInfo(&ctx, v1::GetInfoRequest(), &resp);
    for (const char* key : {kServedByKey, kRevisionKey, kStalenessKey}) {
      auto it = ctx.GetServerTrailingMetadata().find(key);
      if (it != ctx.GetServerTrailingMetadata().end()) {
        (*stamp)[key] = std::string(it->second.data(), it->second.size());
      }
    }
    return s;
  }

  std::unique_ptr<AccessControl> access_;
  std::unique_ptr<Forgetful> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ClusterService::Stub> stub_;
};

TEST_F(GatedTest, AStandbyAnswersFollowedReadsStampedAndRefusesTheRest) {
  std::vector<int64_t> asked;
  Start(Gate{[&](bool followed, int64_t at_least) -> absl::StatusOr<AnswerStamp> {
               asked.push_back(at_least);
               if (!followed) return absl::UnavailableError("a standby; leader: 10.0.0.1:5390");
               if (at_least > 7) return absl::UnavailableError("revision not reached");
               return AnswerStamp{"standby", 7, absl::Milliseconds(1234)};
             },
             [] { return int64_t{99}; }});
  std::map<std::string, std::string> stamp;
  ASSERT_TRUE(Info("7", &stamp).ok());
  EXPECT_EQ(stamp, (std::map<std::string, std::string>{
                       {kServedByKey, "standby"}, {kRevisionKey, "7"}, {kStalenessKey, "1234"}}));
  stamp.clear();
  grpc::Status ahead = Info("8", &stamp);
  EXPECT_EQ(ahead.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ahead.error_message(), "revision not reached");
  EXPECT_TRUE(stamp.empty());
  EXPECT_EQ(asked, (std::vector<int64_t>{7, 8}));
  grpc::Status bad = Info("-3", &stamp);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message(), "paceline-min-revision: expected a revision number, got '-3'");
  EXPECT_EQ(asked.size(), 2u) << "a malformed revision reached the gate";
  // GetHistory is no followed read: refused, naming the leader.
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer secret");
  v1::GetHistoryRequest req;
  req.set_pool("check");
  v1::GetHistoryResponse resp;
  grpc::Status refused = stub_->GetHistory(&ctx, req, &resp);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), testing::HasSubstr("leader: 10.0.0.1:5390"));
}

TEST_F(GatedTest, ALeadersAnswerCarriesTheRevisionCommittedByItsEnd) {
  Start(Gate{[](bool, int64_t) -> absl::StatusOr<AnswerStamp> { return AnswerStamp{"leader"}; },
             [this] { return service_->committed.load(); }});
  std::map<std::string, std::string> stamp;
  ASSERT_TRUE(Info("", &stamp).ok());
  EXPECT_EQ(stamp,
            (std::map<std::string, std::string>{{kServedByKey, "leader"}, {kRevisionKey, "41"}}));
}

}  // namespace
}  // namespace paceline::api
