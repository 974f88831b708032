#include "sim/alibaba_trace.h"

#include <gtest/gtest.h>

namespace paceline::sim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(AlibabaTrace, ReadsNodes) {
  const char* csv =
      "sn,cpu_milli,memory_mib,gpu,model\r\n"
      "openb-node-0000,32000,262144,0,\r\n"
      "openb-node-0001,96000,393216,8,G2\r\n"
      "\r\n";
  auto nodes = ParseAlibabaNodes(csv);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].gpus, 0);
  EXPECT_TRUE((*nodes)[0].model.empty());
  EXPECT_EQ((*nodes)[1].model, "G2");
  EXPECT_EQ((*nodes)[1].capacity(), Resources::Of(96000, 393216 * kMiB, 0, 8000));
}

TEST(AlibabaTrace, ReadsTasksWithFractionsWholeGpusAndModels) {
  const char* csv =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
      "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
      "openb-pod-0002,88000,327680,8,1000,V100M16|V100M32,BE,Failed,10,20,\n"
      "openb-pod-0003,8000,30517,0,0,,BE,Pending,5,,\n";
  auto tasks = ParseAlibabaTasks(csv);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 4u);
  const auto& t = *tasks;
  EXPECT_EQ(t[0].gpu_ask_milli(), 1000);
  EXPECT_EQ(t[1].gpu_ask_milli(), 460);
  EXPECT_EQ(t[1].resources(), Resources::Of(6000, 12288 * kMiB, 0, 460));
  EXPECT_EQ(t[2].gpu_ask_milli(), 8000);
  EXPECT_EQ(t[2].gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(t[2].phase, "Failed");
  EXPECT_EQ(t[2].scheduled_time, -1);
  EXPECT_EQ(t[3].gpu_ask_milli(), 0);
  EXPECT_EQ(t[3].qos, "BE");
  EXPECT_EQ(t[3].creation_time, 5);
  EXPECT_EQ(t[3].deletion_time, -1);
  EXPECT_EQ(t[1].creation_time, 427061);
}

TEST(AlibabaTrace, ShortTaskFilesReadTheSame) {
  // openb_pod_list_multigpu20.csv has only the five required columns.
  auto tasks = ParseAlibabaTasks(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "openb-pod-0000,12000,16384,2,1000\n");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].gpu_ask_milli(), 2000);
  EXPECT_TRUE((*tasks)[0].gpu_models.empty());
  EXPECT_EQ((*tasks)[0].creation_time, -1);
}

TEST(AlibabaTrace, ErrorsNameTheLineAndColumn) {
  auto bad_number = ParseAlibabaTasks("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,12x,1,0,0\n");
  ASSERT_FALSE(bad_number.ok());
  EXPECT_EQ(bad_number.status().message(), "line 2: column cpu_milli: '12x' is not a whole number");
  auto missing = ParseAlibabaNodes("sn,cpu_milli,memory_mib,gpu\nn,1,1,0\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "missing column 'model'");
  auto width = ParseAlibabaNodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1\n");
  ASSERT_FALSE(width.ok());
  EXPECT_EQ(width.status().message(), "line 2: 3 fields, the header has 5");
  EXPECT_FALSE(ParseAlibabaNodes("").ok());
  EXPECT_FALSE(ParseAlibabaNodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n").ok());
  EXPECT_FALSE(
      ParseAlibabaTasks("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1500\n").ok());
  EXPECT_FALSE(ParseAlibabaTasks("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,-1,1,0,0\n").ok());
  EXPECT_EQ(ReadAlibabaNodes("/nonexistent/nodes.csv").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace paceline::sim
