#pragma once
// VolumeHook: the persistent directory of a stateful instance.
//
//   <work_dir>/volumes/<job>/<instance>/   0700, owned by the task user
// Created on the instance's first launch on this host and kept across runs (restarts, updates,
// agent restarts). It lives outside the sandbox, so removing old sandboxes never touches it;
// PACELINE_VOLUME holds its absolute path. No size quota is enforced (the spec's size is used by
// placement only).
//
// Thread-safety: runtime thread only.

#include <string>

#include "agent/base/task_hook.h"

namespace paceline::agent {

class VolumeHook final : public TaskHook {
 public:
  explicit VolumeHook(std::string work_dir) : work_dir_(std::move(work_dir)) {}
  absl::string_view name() const override { return "volume"; }
  absl::Status Prepare(RunContext& ctx) override;

  static std::string VolumePath(const std::string& work_dir, const TaskId& task);

 private:
  std::string work_dir_;
};

}  // namespace paceline::agent
