// task.container in job specs: read, printed back, validated (docs/containers.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;

constexpr char kHead[] = "name: c\ninstances: 1\ntask:\n  resources: {cpu: 1, memory: 1Gi}\n";

absl::StatusOr<JobSpec> Parse(const std::string& task_lines, const std::string& head = kHead) {
  return ParseJobSpec(absl::StrCat(head, task_lines), "c.yaml");
}

std::string ErrorOf(const std::string& task_lines, const std::string& head = kHead) {
  absl::StatusOr<JobSpec> spec = Parse(task_lines, head);
  EXPECT_FALSE(spec.ok()) << task_lines;
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(ContainerSpecTest, EveryFieldIsReadAndPrintedBack) {
  absl::StatusOr<JobSpec> spec = Parse(R"(  container:
    image: registry.example.com/team/app:1.4
    pull: always
    entrypoint: [/app/run]
    args: [--epochs, "10"]
    user: "1000:1000"
    read_only_rootfs: true
    network: none
    pull_secret: registry-login
    mounts:
      - {source: tmpfs, target: /scratch}
      - {source: sandbox/out, target: /out, read_only: true}
      - {source: /srv/models, target: /models}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->task.container.has_value());
  const ContainerSpec& c = *spec->task.container;
  EXPECT_EQ(c.image, "registry.example.com/team/app:1.4");
  EXPECT_EQ(c.pull, PullPolicy::kAlways);
  EXPECT_EQ(c.entrypoint, std::vector<std::string>{"/app/run"});
  EXPECT_EQ(c.args, (std::vector<std::string>{"--epochs", "10"}));
  EXPECT_EQ(c.user, "1000:1000");
  EXPECT_TRUE(c.read_only_rootfs);
  EXPECT_EQ(c.network, ContainerNetwork::kNone);
  EXPECT_EQ(c.pull_secret, "registry-login");
  ASSERT_EQ(c.mounts.size(), 3u);
  EXPECT_EQ(c.mounts[1], (ContainerMount{"sandbox/out", "/out", true}));
  EXPECT_TRUE(spec->task.command.empty());

  std::string printed = PrintJobSpec(*spec);
  EXPECT_THAT(printed, Not(HasSubstr("command")));
  absl::StatusOr<JobSpec> again = ParseJobSpec(printed, "printed");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  EXPECT_EQ(*again, *spec);
}

TEST(ContainerSpecTest, AnEmptyEntrypointIsKeptApartFromNone) {
  absl::StatusOr<JobSpec> spec = Parse("  container: {image: app, entrypoint: []}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->task.container->entrypoint.has_value());
  EXPECT_TRUE(spec->task.container->entrypoint->empty());
  EXPECT_FALSE(spec->task.container->args.has_value());
  absl::StatusOr<JobSpec> again = ParseJobSpec(PrintJobSpec(*spec), "printed");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);
}

TEST(ContainerSpecTest, ACommandRunsInTheContainerAndPlainTasksStillNeedOne) {
  absl::StatusOr<JobSpec> spec = Parse("  command: echo hi\n  container: {image: app}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->task.command, "echo hi");
  EXPECT_THAT(ErrorOf(""), HasSubstr("task.command"));
}

TEST(ContainerSpecTest, BadFieldsAreNamedWithWhatWasExpected) {
  EXPECT_THAT(ErrorOf("  container: {pull: always}\n"), HasSubstr("task.container.image"));
  EXPECT_THAT(ErrorOf("  container: {image: Bad/Name}\n"),
              HasSubstr("task.container.image: image reference \"Bad/Name\""));
  EXPECT_THAT(ErrorOf("  container: {image: app, pull: sometimes}\n"), HasSubstr("if-not-present"));
  EXPECT_THAT(ErrorOf("  container: {image: app, network: bridge}\n"), HasSubstr("host"));
  EXPECT_THAT(ErrorOf("  command: x\n  container: {image: app, args: [y]}\n"),
              HasSubstr("give one or the other"));
  EXPECT_THAT(ErrorOf("  container: {image: app, user: \"a b\"}\n"),
              HasSubstr("task.container.user"));
  EXPECT_THAT(ErrorOf("  user: alice\n  container: {image: app}\n"),
              HasSubstr("set task.container.user instead"));
  EXPECT_THAT(ErrorOf("  container: {image: app, pull_secret: \"Bad!\"}\n"),
              HasSubstr("task.container.pull_secret"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: ../etc, target: /x}]}\n"),
              HasSubstr("task.container.mounts[0].source"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: sandbox/../x, target: /x}]}\n"),
              HasSubstr("task.container.mounts[0].source"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: /, target: /x}]}\n"),
              HasSubstr("the host's root"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: tmpfs, target: rel}]}\n"),
              HasSubstr("task.container.mounts[0].target"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: tmpfs, target: /proc/x}]}\n"),
              HasSubstr("/proc"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: tmpfs, target: /a}, "
                      "{source: tmpfs, target: /a}]}\n"),
              HasSubstr("task.container.mounts[1].target"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{source: volume, target: /data}]}\n"),
              HasSubstr("set task.volume"));
  EXPECT_THAT(ErrorOf("  container: {image: app, mounts: [{target: /data}]}\n"),
              HasSubstr("source"));
}

}  // namespace
}  // namespace paceline
