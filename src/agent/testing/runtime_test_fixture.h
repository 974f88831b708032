#pragma once
// The fixture shared by the runtime tests: a fresh work dir and agent, recovered and ready; at
// the end every task is killed and the agent's cgroups are removed.

#include <sys/stat.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/task_runtime.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent::testing {

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = TestConfig(dir_.Sub("work"));
    Customize(config_);
    Start();
  }
  void TearDown() override {
    if (rt_) KillAllAndWait(*rt_, log_);
    rt_.reset();
    RemoveAgentCgroups(config_);
  }
  // Lets a test adjust the config before the agent starts.
  virtual void Customize(AgentConfig&) {}

  void Start() {
    absl::StatusOr<std::unique_ptr<TaskRuntime>> rt = TaskRuntime::Create(config_);
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = std::move(*rt);
    ASSERT_TRUE(rt_->Recover().ok());
    log_.Reset(rt_.get());
  }

  // Launches and waits for the terminal event.
  std::optional<TaskEvent> RunToEnd(const LaunchRequest& r) {
    absl::Status s = rt_->Launch(r);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return std::nullopt;
    return WaitTerminal(*rt_, log_, r.run);
  }

  bool Until(const std::function<bool()>& pred, absl::Duration timeout = absl::Seconds(20)) {
    return RunUntil(*rt_, log_, pred, timeout);
  }

  // A path in a world-writable directory, for files tasks (running as "nobody") create.
  std::string Shared(const std::string& name) {
    std::string d = dir_.Sub("shared");
    if (!PathExists(d)) {
      ::mkdir(d.c_str(), 0777);
      ::chmod(d.c_str(), 01777);
    }
    return d + "/" + name;
  }

  std::string Sandbox(const RunId& run) const {
    return absl::StrCat(config_.work_dir, "/sandboxes/", run.task.job.value(), "_",
                        run.task.instance, "_", run.run);
  }

  TempDir dir_;
  AgentConfig config_;
  std::unique_ptr<TaskRuntime> rt_;
  EventLog log_{nullptr};
};

}  // namespace paceline::agent::testing
