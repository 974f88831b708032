#include "agentd/agent_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::agentd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(AgentMetricsTest, ShowsTheSnapshotAndTheFilesystem) {
  AgentMetricsOptions o;
  o.host = "host-1";
  o.version = "0.1.0";
  o.commit = "abc";
  o.isolation = "cgroup \"v2\"";
  AgentSnapshot s;
  s.connected = true;
  s.runs = {{"running", 3}, {"ending", 1}};
  s.unacknowledged_updates = 7;
  s.image_cache_bytes = 1 << 20;
  const std::string text = RenderAgentMetrics(o, s, FilesystemSize{1000, 250});
  EXPECT_THAT(text, HasSubstr("# TYPE paceline_agent_info gauge\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_info{host=\"host-1\",version=\"0.1.0\",commit="
                              "\"abc\",isolation=\"cgroup \\\"v2\\\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_connected 1\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_runs{state=\"running\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_runs{state=\"starting\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_runs{state=\"ending\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_unacknowledged_updates 7\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_image_cache_bytes 1048576\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_filesystem_size_bytes 1000\n"));
  EXPECT_THAT(text, HasSubstr("paceline_agent_filesystem_avail_bytes 250\n"));
}

TEST(AgentMetricsTest, AFilesystemThatCannotBeReadIsLeftOut) {
  const std::string text = RenderAgentMetrics({}, {}, std::nullopt);
  EXPECT_THAT(text, HasSubstr("paceline_agent_connected 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("filesystem")));
}

TEST(AgentMetricsTest, PlainTextOnlyOnLoopback) {
  AgentMetricsOptions o;
  o.listen = {"0.0.0.0", 0};
  absl::StatusOr<std::unique_ptr<AgentMetrics>> m = AgentMetrics::Start(o);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("loopback address only"));
  o.listen = {"127.0.0.1", 0};
  m = AgentMetrics::Start(o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT((*m)->bound().port, 0);
}

}  // namespace
}  // namespace paceline::agentd
