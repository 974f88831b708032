// depends_on in the job manager: refused at creation while dependencies are not enforced (a job
// must never start before the jobs it waits for), and never changed by an update.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "jobmgr/test_util.h"

namespace paceline::jobmgr {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

JobSpec Spec(const std::string& name, JobType type = JobType::kBatch) {
  JobSpec s;
  s.name = name;
  s.type = type;
  s.instances = 2;
  s.task.command = "run";
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  return s;
}

class DependenciesTest : public JobManagerFixture {};

TEST_F(DependenciesTest, CreationWithDependsOnIsRefusedAndChangesNothing) {
  JobId a = Create(Spec("a"));
  JobSpec b = Spec("b");
  b.depends_on.push_back({.job = std::to_string(a.value())});
  Effects fx;
  absl::StatusOr<JobId> r = jm_.CreateJob(b, "/pool", now_, fx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), StartsWith("depends_on: "));
  EXPECT_TRUE(fx.enqueue.empty());
  EXPECT_TRUE(fx.batch.put_jobs.empty());
  EXPECT_EQ(jm_.GetJob(JobId(a.value() + 1)), nullptr);
  // The next job still gets the next id: a refusal uses none.
  EXPECT_EQ(Create(Spec("c")), JobId(a.value() + 1));
}

TEST_F(DependenciesTest, AnUpdateThatChangesDependsOnIsRefused) {
  JobId a = Create(Spec("a"));
  JobId web = Create(Spec("web", JobType::kService));
  JobSpec changed = Spec("web", JobType::kService);
  changed.task.command = "run v2";
  changed.depends_on.push_back({.job = std::to_string(a.value())});
  absl::StatusOr<uint64_t> r;
  Do([&](Effects& fx) {
    UpdateRequest req{changed, jm_.GetJob(web)->version(), UpdateSpec{}};
    r = jm_.updates().Start(web, std::move(req), now_, fx);
    EXPECT_TRUE(fx.enqueue.empty());
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), StartsWith("depends_on: "));
  EXPECT_THAT(r.status().message(), HasSubstr("cannot change by an update"));
  EXPECT_EQ(jm_.GetJob(web)->version(), 1u);
  // The same update without the change goes ahead.
  changed.depends_on.clear();
  Do([&](Effects& fx) {
    r = jm_.updates().Start(web, {changed, jm_.GetJob(web)->version(), UpdateSpec{}}, now_, fx);
  });
  EXPECT_TRUE(r.ok()) << r.status();
}

}  // namespace
}  // namespace paceline::jobmgr
