#include "api/json_gateway.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "paceline/v1/job.pb.h"
#include "paceline/v1/pool.pb.h"

namespace paceline::api {
namespace {

TEST(JsonGateway, FindsClientMethodsOnly) {
  auto get = FindApiMethod("JobService", "GetJob");
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ((*get)->full_name(), "paceline.v1.JobService.GetJob");
  EXPECT_TRUE(IsReadMethod(**get));

  auto kill = FindApiMethod("JobService", "KillJob");
  ASSERT_TRUE(kill.ok());
  EXPECT_FALSE(IsReadMethod(**kill));

  // The streams are reads: GET opens them.
  for (const char* stream : {"Watch", "WatchEndpoints"}) {
    auto m = FindApiMethod("JobService", stream);
    ASSERT_TRUE(m.ok()) << stream;
    EXPECT_TRUE((*m)->server_streaming()) << stream;
    EXPECT_TRUE(IsReadMethod(**m)) << stream;
  }

  auto agent = FindApiMethod("AgentService", "Connect");
  EXPECT_EQ(agent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(agent.status().message().find("JobService"), std::string::npos);

  auto typo = FindApiMethod("JobService", "GetJobs");
  EXPECT_EQ(typo.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(typo.status().message().find("GetJob"), std::string::npos);
}

TEST(JsonGateway, QueryParametersBecomeFields) {
  std::multimap<std::string, std::string> params = {{"pool", "/batch"},
                                                    {"states", "RUNNING"},
                                                    {"states", "PENDING"},
                                                    {"labels", "team=ads"},
                                                    {"page_size", "10"}};
  auto json = QueryToJson(*v1::QueryJobsRequest::descriptor(), params);
  ASSERT_TRUE(json.ok()) << json.status();
  nlohmann::json j = nlohmann::json::parse(*json);
  EXPECT_EQ(j["pool"], "/batch");
  EXPECT_EQ(j["states"], nlohmann::json::array({"RUNNING", "PENDING"}));
  EXPECT_EQ(j["labels"]["team"], "ads");
  EXPECT_EQ(j["page_size"], "10");  // quoted numbers are valid proto3 JSON
}

TEST(JsonGateway, UnknownOrMalformedParametersAreRefused) {
  auto unknown = QueryToJson(*v1::GetJobRequest::descriptor(), {{"jobid", "1"}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'jobid'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("job_id"), std::string::npos);

  auto label = QueryToJson(*v1::QueryJobsRequest::descriptor(), {{"labels", "team"}});
  EXPECT_EQ(label.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(label.status().message().find("KEY=VALUE"), std::string::npos);

  auto flag = QueryToJson(*v1::GetPoolRequest::descriptor(), {{"pool", "x"}});
  EXPECT_FALSE(flag.ok());
}

TEST(JsonGateway, StatusCodesMapToHttp) {
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::OK), 200);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNAUTHENTICATED), 401);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::ABORTED), 409);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNAVAILABLE), 503);
  nlohmann::json e = nlohmann::json::parse(
      ErrorJson(grpc::Status(grpc::StatusCode::NOT_FOUND, "job 9 not found")));
  EXPECT_EQ(e["code"], "NOT_FOUND");
  EXPECT_EQ(e["message"], "job 9 not found");
}

}  // namespace
}  // namespace paceline::api
