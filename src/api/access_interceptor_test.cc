// The gRPC interceptor with AccessControl on a real in-process server: a handler that forgets
// to check its caller answers nothing; one that checks is refused or answered as the table says.

#include "api/access_interceptor.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

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
  grpc::Status GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*,
                       v1::GetInfoResponse* resp) override {
    resp->set_version("v");
    return grpc::Status::OK;
  }

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

  AccessControl access_{{{"secret", access::Principal{"root", "", access::Role::kAdmin, "/", "b"}}},
                        nullptr,
                        nullptr};
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

}  // namespace
}  // namespace paceline::api
