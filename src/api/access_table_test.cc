// The permission table (access/permissions.h) against what the master really serves: every
// method of every gRPC service of the API, and every route of the HTTP server, has an entry —
// a new method or route without one fails here (and would be refused by the master).

#include <filesystem>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "access/permissions.h"
#include "api/access_control.h"
#include "api/access_interceptor.h"
#include "api/cluster_service.h"
#include "api/http_routes.h"
#include "api/json_gateway.h"
#include "api/ui_routes.h"
#include "http/http_server.h"
#include "paceline/v1/access.pb.h"
#include "paceline/v1/cluster.pb.h"
#include "paceline/v1/host.pb.h"
#include "paceline/v1/job.pb.h"
#include "paceline/v1/pool.pb.h"
#include "paceline/v1/secret.pb.h"

namespace paceline::api {
namespace {

namespace pb = google::protobuf;

// Every service of every .proto file of the API.
std::vector<const pb::ServiceDescriptor*> ApiServices() {
  // Referencing one message of each file links its descriptors in.
  (void)v1::WhoAmIRequest::descriptor();
  (void)v1::GetInfoRequest::descriptor();
  (void)v1::ListHostsRequest::descriptor();
  (void)v1::GetJobRequest::descriptor();
  (void)v1::GetPoolRequest::descriptor();
  (void)v1::ListSecretsRequest::descriptor();
  std::vector<const pb::ServiceDescriptor*> out;
  for (const auto& entry : std::filesystem::directory_iterator(PACELINE_PROTO_DIR)) {
    if (entry.path().extension() != ".proto") continue;
    const std::string name = "paceline/v1/" + entry.path().filename().string();
    const pb::FileDescriptor* file = pb::DescriptorPool::generated_pool()->FindFileByName(name);
    EXPECT_NE(file, nullptr) << name
                             << " is not linked into this test: reference one of its "
                                "messages in ApiServices()";
    if (file == nullptr) continue;
    for (int i = 0; i < file->service_count(); ++i) out.push_back(file->service(i));
  }
  return out;
}

TEST(AccessTable, EveryMethodOfTheApiHasAnEntry) {
  int methods = 0;
  for (const pb::ServiceDescriptor* s : ApiServices()) {
    for (int i = 0; i < s->method_count(); ++i) {
      const std::string route = absl::StrCat(s->full_name(), "/", s->method(i)->name());
      EXPECT_NE(access::FindPermission(route), nullptr)
          << route << " has no entry in access/permissions.cc: the master refuses every call";
      ++methods;
    }
  }
  EXPECT_GE(methods, 37);
}

TEST(AccessTable, EveryEntryIsAMethodOrARouteThatExists) {
  std::set<std::string> known;
  for (const pb::ServiceDescriptor* s : ApiServices()) {
    for (int i = 0; i < s->method_count(); ++i) {
      known.insert(absl::StrCat(s->full_name(), "/", s->method(i)->name()));
    }
  }
  http::HttpServer server;
  AddHealthRoutes(server, MasterFacts{});
  AddMetricsRoutes(server, nullptr, MasterFacts{});
  AddJsonApiRoutes(server, nullptr);
  AddUiRoutes(server);
  for (const std::string& r : server.Routes().RouteNames()) {
    known.insert(r);
    EXPECT_NE(access::FindPermission(r), nullptr)
        << "HTTP route " << r << " has no entry in access/permissions.cc: it is refused";
  }
  for (const access::Permission& p : access::Permissions()) {
    EXPECT_TRUE(known.contains(std::string(p.route)))
        << p.route << " is neither a method nor a route";
  }
}

TEST(AccessTable, ARouteWithoutAnEntryIsRefusedByTheGuard) {
  AccessControl access({{"secret", access::Principal{"root", "", access::Role::kAdmin, "/", "b"}}},
                       nullptr, Gate{});
  http::HttpRouter router;
  router.SetGuard([&](const http::HttpRequest& req, absl::string_view route,
                      http::HttpResponse& res) { return access.AllowHttp(req, route, res); });
  bool ran = false;
  router.Get("/not-in-the-table",
             [&](const http::HttpRequest&, http::HttpResponse&) { ran = true; });
  router.Get("/metrics", [&](const http::HttpRequest&, http::HttpResponse&) { ran = true; });
  http::HttpRequest req;
  req.method = "GET";
  req.path = "/not-in-the-table";
  http::HttpResponse res;
  router.Dispatch(req, res);
  EXPECT_FALSE(ran);
  EXPECT_EQ(res.status, 403);
  EXPECT_THAT(res.body, testing::HasSubstr("no entry in the permission table"));
  // A route in the table: its need is checked (here: a token).
  req.path = "/metrics";
  res = http::HttpResponse();
  router.Dispatch(req, res);
  EXPECT_FALSE(ran);
  EXPECT_EQ(res.status, 401);
  req.headers.emplace_back("Authorization", "Bearer secret");
  res = http::HttpResponse();
  router.Dispatch(req, res);
  EXPECT_TRUE(ran);
}

TEST(AccessTable, RequestIdsAreShort) {
  EXPECT_TRUE(IsSaneRequestId("abc-123_x.y"));
  EXPECT_FALSE(IsSaneRequestId(""));
  EXPECT_FALSE(IsSaneRequestId(std::string(65, 'a')));
  EXPECT_FALSE(IsSaneRequestId("a b"));
  EXPECT_FALSE(IsSaneRequestId("a\nb"));
}

}  // namespace
}  // namespace paceline::api
