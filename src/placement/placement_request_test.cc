#include "placement/placement_request.h"

#include <gtest/gtest.h>

namespace paceline::placement {
namespace {

TEST(TaskShape, FromSpecAppliesOverridesAndSplitsConstraints) {
  JobSpec spec;
  spec.name = "web";
  spec.labels = {{"team", "ads"}, {"app", "web"}};
  spec.task.resources = Resources::Of(500, 1 << 30, 0, 250);
  spec.task.gpu_models = {"T4", "A100", "T4"};
  spec.task.ports = {"http", "grpc"};
  spec.task.exclusive = "ml";
  spec.task.constraints = {LabelConstraint{"zone", ConstraintOp::kIn, {"a"}, 0},
                           MaxPerHostConstraint{2, "app"}};
  spec.OverrideTask(3).resources = Resources::Of(4000, int64_t{8} << 30, 0, 2000);

  auto s0 = TaskShapeFromSpec(JobId(42), spec, 0);
  ASSERT_TRUE(s0.ok()) << s0.status();
  const TaskShape& a = **s0;
  EXPECT_EQ(a.job, JobId(42));
  EXPECT_EQ(a.gpu_models, (std::vector<std::string>{"A100", "T4"}));  // sorted, unique
  EXPECT_EQ(a.job_labels.front().first, "app");                       // sorted
  EXPECT_EQ(a.label_constraints.size(), 1u);
  EXPECT_EQ(a.max_per_host.size(), 1u);
  EXPECT_EQ(a.num_ports(), 2u);
  EXPECT_TRUE(a.fractional_gpu());
  EXPECT_EQ(a.gpu_devices_needed(), 1);

  auto s3 = TaskShapeFromSpec(JobId(42), spec, 3);
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ((*s3)->gpu_devices_needed(), 2);
  EXPECT_NE((*s3)->signature, a.signature);
  EXPECT_NE((*s3)->static_signature, a.static_signature);  // 2 devices instead of 1
  auto s1 = TaskShapeFromSpec(JobId(42), spec, 1);
  ASSERT_TRUE(s1.ok());
  EXPECT_EQ((*s1)->signature, a.signature);
  EXPECT_EQ(**s1, a);
}

TEST(TaskShape, StaticSignatureIgnoresWhatStaticFiltersDoNotRead) {
  TaskShape x;
  x.job = JobId(1);
  x.resources = Resources::Of(1000, 1 << 30);
  x.label_constraints = {LabelConstraint{"zone", ConstraintOp::kIn, {"a"}, 0}};
  TaskShape y = x;
  y.job = JobId(2);
  y.resources = Resources::Of(3000, int64_t{4} << 30);
  auto sx = MakeTaskShape(x);
  auto sy = MakeTaskShape(y);
  ASSERT_TRUE(sx.ok() && sy.ok());
  EXPECT_EQ((*sx)->static_signature, (*sy)->static_signature);
  EXPECT_TRUE((*sx)->StaticEquals(**sy));
  EXPECT_NE((*sx)->signature, (*sy)->signature);
}

TEST(TaskShape, InvalidShapesAreRejected) {
  TaskShape gpu;
  gpu.resources = Resources::Of(1000, 0, 0, 1500);
  EXPECT_EQ(MakeTaskShape(gpu).status().code(), absl::StatusCode::kInvalidArgument);
  TaskShape neg;
  neg.resources = Resources::Of(-1, 0);
  EXPECT_FALSE(MakeTaskShape(neg).ok());
  TaskShape no_values;
  no_values.label_constraints = {LabelConstraint{"zone", ConstraintOp::kIn, {}, 0}};
  EXPECT_FALSE(MakeTaskShape(no_values).ok());
  TaskShape zero_max;
  zero_max.max_per_host = {MaxPerHostConstraint{0, ""}};
  EXPECT_FALSE(MakeTaskShape(zero_max).ok());
  TaskShape unknown_label;
  unknown_label.max_per_host = {MaxPerHostConstraint{1, "app"}};
  auto s = MakeTaskShape(unknown_label);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "max_per_host counts task label 'app' but the job has no such label");
}

TEST(PlacementRequest, GangNumbersItsMembers) {
  TaskShape t;
  t.job = JobId(9);
  auto shape = *MakeTaskShape(t);
  PlacementRequest g = PlacementRequest::Gang(JobId(9), 10, 3, shape);
  ASSERT_EQ(g.tasks.size(), 3u);
  EXPECT_EQ(g.tasks[0].id, (TaskId{JobId(9), 10}));
  EXPECT_EQ(g.tasks[2].id, (TaskId{JobId(9), 12}));
  EXPECT_EQ(g.tasks[1].shape, shape);
}

}  // namespace
}  // namespace paceline::placement
