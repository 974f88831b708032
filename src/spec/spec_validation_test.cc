// The validators on their own: the API path, where specs arrive as structs.

#include "spec/spec_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

JobSpec ValidJob() {
  JobSpec j;
  j.name = "web";
  j.type = JobType::kService;
  j.instances = 3;
  j.task.command = "serve";
  j.task.resources = Resources::Of(500, 256 << 20);
  return j;
}

TEST(ValidateJobSpecTest, ValidJob) { EXPECT_THAT(ValidateJobSpec(ValidJob()), IsEmpty()); }

TEST(ValidateJobSpecTest, EmptyStructReportsTheRequiredFields) {
  std::vector<FieldError> errors = ValidateJobSpec(JobSpec{});
  std::vector<std::string> paths;
  for (const FieldError& e : errors) paths.push_back(e.path);
  EXPECT_THAT(paths, ElementsAre("name", "instances", "task.command", "task.resources.cpu",
                                 "task.resources.memory"));
}

TEST(ValidateJobSpecTest, ResourcesTheYamlCannotExpress) {
  JobSpec j = ValidJob();
  j.task.resources[Dim::kGpu] = 1500;
  j.task.resources[Dim::kDisk] = kUnlimited;
  std::vector<FieldError> errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path, "task.resources.disk");
  EXPECT_EQ(errors[1].path, "task.resources.gpu");
  EXPECT_THAT(errors[1].message, HasSubstr("1.5 mixes whole devices and a fraction"));
}

TEST(ValidateJobSpecTest, RelatedFieldsAreNamed) {
  JobSpec j = ValidJob();
  j.sla.min_running_instances = 5;
  std::vector<FieldError> errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "sla.min_running_instances");
  EXPECT_THAT(errors[0].related, ElementsAre("instances", "type"));
}

TEST(ValidateJobSpecTest, ExpectedRunningTimeIsAnEstimateWithinTheLimit) {
  JobSpec j = ValidJob();
  j.sla.expected_running_time = absl::Hours(3);  // no limit: any estimate
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  j.sla.max_running_time = absl::Hours(3);  // equal to the limit
  EXPECT_THAT(ValidateJobSpec(j), IsEmpty());
  j.sla.max_running_time = absl::Hours(2);
  std::vector<FieldError> errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "sla.expected_running_time");
  EXPECT_THAT(errors[0].message, HasSubstr("3h is above max_running_time (2h)"));
  EXPECT_THAT(errors[0].related, ElementsAre("sla.max_running_time"));
  j.sla.expected_running_time = absl::Minutes(-5);
  errors = ValidateJobSpec(j);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "sla.expected_running_time");
  EXPECT_THAT(errors[0].message, HasSubstr("is negative"));
}

TEST(ValidateJobSpecTest, NameRules) {
  for (const char* bad : {"a/b", "-lead", "white space", "ünï"}) {
    JobSpec j = ValidJob();
    j.name = bad;
    EXPECT_THAT(ValidateJobSpec(j), ElementsAre(Field(&FieldError::path, "name"))) << bad;
  }
  JobSpec j = ValidJob();
  j.name = std::string(kMaxNameLength + 1, 'a');
  EXPECT_THAT(ValidateJobSpec(j), ElementsAre(Field(&FieldError::path, "name")));
}

TEST(ValidateJobSpecTest, OddLabelKeysGetQuotedPaths) {
  JobSpec j = ValidJob();
  j.labels["bad key"] = "v";
  EXPECT_THAT(ValidateJobSpec(j), ElementsAre(Field(&FieldError::path, "labels[\"bad key\"]")));
}

TEST(ValidatePoolSpecTest, Rules) {
  PoolSpec p;
  EXPECT_THAT(ValidatePoolSpec(p), IsEmpty());
  p.dim(Dim::kCpu).reservation = 10;
  p.dim(Dim::kCpu).limit = 5;
  p.dim(Dim::kMemory).share = 0;
  p.dim(Dim::kDisk).reservation = kUnlimited;
  p.controller_limit_percent = 0;
  std::vector<std::string> paths;
  for (const FieldError& e : ValidatePoolSpec(p)) paths.push_back(e.path);
  EXPECT_THAT(paths, ElementsAre("resources.cpu.reservation", "resources.memory.share",
                                 "resources.disk.reservation", "controller_limit"));
}

TEST(IsValidUtf8Test, Cases) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("über 日本 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

}  // namespace
}  // namespace paceline
