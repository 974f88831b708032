// depends_on in job specs: parsing, defaults, errors at line:column, printing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;

constexpr const char* kHead =
    "name: b\ninstances: 1\ntask:\n  command: run\n  resources: {cpu: 1, memory: 1Gi}\n";

absl::StatusOr<JobSpec> Parse(absl::string_view rest) {
  return ParseJobSpec(absl::StrCat(kHead, rest), "b.yaml");
}

std::string ErrorOf(absl::string_view rest) {
  absl::StatusOr<JobSpec> spec = Parse(rest);
  EXPECT_FALSE(spec.ok()) << rest;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(JobDependenciesTest, ParsesIdsNamesAndConditions) {
  absl::StatusOr<JobSpec> spec = Parse(
      "depends_on:\n  - {job: 12}\n  - {job: nightly-etl, condition: failed}\n"
      "  - job: \"7\"\n    condition: finished\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->depends_on.size(), 3u);
  EXPECT_EQ(spec->depends_on[0],
            (JobDependency{.job = "12", .condition = DependencyCondition::kSucceeded}));
  EXPECT_EQ(spec->depends_on[1],
            (JobDependency{.job = "nightly-etl", .condition = DependencyCondition::kFailed}));
  EXPECT_EQ(spec->depends_on[2],
            (JobDependency{.job = "7", .condition = DependencyCondition::kFinished}));
}

TEST(JobDependenciesTest, ErrorsAtLineAndColumn) {
  EXPECT_THAT(ErrorOf("depends_on: [{job: 3, condition: ok}]\n"),
              HasSubstr("b.yaml:6:34: depends_on[0].condition: 'ok' is not valid; expected one of: "
                        "succeeded, failed, finished"));
  EXPECT_THAT(ErrorOf("depends_on:\n  - {job: 0}\n"),
              HasSubstr("b.yaml:7:11: depends_on[0].job: '0' is not a job id; expected a "
                        "positive whole number"));
  EXPECT_THAT(ErrorOf("depends_on:\n  - {job: 3}\n  - {job: \"012\"}\n"),
              HasSubstr("b.yaml:8:11: depends_on[1].job: '012' is not a job id"));
  EXPECT_THAT(ErrorOf("depends_on: [{job: a/b}]\n"),
              HasSubstr("b.yaml:6:20: depends_on[0].job: 'a/b' is neither a job id nor a job "
                        "name"));
  EXPECT_THAT(ErrorOf("depends_on: [{job: a}, {job: a, condition: failed}]\n"),
              HasSubstr("b.yaml:6:30: depends_on[1].job: 'a' is listed twice; expected each "
                        "job once"));
  EXPECT_THAT(ErrorOf("depends_on: [{condition: failed}]\n"),
              HasSubstr("b.yaml:6:14: depends_on[0].job: is required; expected a job id such as "
                        "12"));
  EXPECT_THAT(ErrorOf("depends_on: [{job: a, after: 1}]\n"),
              HasSubstr("b.yaml:6:23: depends_on[0].after: unknown key 'after'"));
  EXPECT_THAT(ErrorOf("depends_on: {job: a}\n"),
              HasSubstr("b.yaml:6:13: depends_on: is a map; expected a list"));
}

TEST(JobDependenciesTest, RefusedOnADaemonJob) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(
      "name: d\ntype: daemon\ntask:\n  command: run\n  resources: {cpu: 1, memory: 1Gi}\n"
      "depends_on: [{job: 3}]\n",
      "d.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(),
              HasSubstr("d.yaml:6:13: depends_on: is given on a daemon job; a daemon runs on "
                        "every host"));
}

TEST(JobDependenciesTest, AtMostThirtyTwo) {
  std::string list = "depends_on:\n";
  for (int i = 1; i <= 33; ++i) absl::StrAppend(&list, "  - {job: ", i, "}\n");
  EXPECT_THAT(ErrorOf(list),
              HasSubstr("b.yaml:7:3: depends_on: has 33 entries; expected at most 32"));
  std::string ok = "depends_on:\n";
  for (int i = 1; i <= 32; ++i) absl::StrAppend(&ok, "  - {job: ", i, "}\n");
  EXPECT_TRUE(Parse(ok).ok());
}

TEST(JobDependenciesTest, PrintsAndReadsBack) {
  absl::StatusOr<JobSpec> spec =
      Parse("depends_on: [{job: 12}, {job: \"true\", condition: finished}]\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string printed = PrintJobSpec(*spec);
  EXPECT_THAT(printed, HasSubstr("depends_on:\n  - {job: 12, condition: succeeded}\n"));
  absl::StatusOr<JobSpec> again = ParseJobSpec(printed, "printed.yaml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  EXPECT_EQ(*again, *spec);
}

}  // namespace
}  // namespace paceline
