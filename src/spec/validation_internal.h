#pragma once
// Helpers shared by the spec validators (spec_validation.cc, job_validation.cc). Internal to
// src/spec.
//
// Thread-safety: pure functions; ErrorSink is a plain value used by one thread.

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/resources.h"
#include "spec/spec_validation.h"

namespace paceline::validation_internal {

class ErrorSink {
 public:
  void Add(std::string path, std::string message,
           std::initializer_list<absl::string_view> related = {});
  void Add(FieldError e) { errors_.push_back(std::move(e)); }
  std::vector<FieldError> Take() { return std::move(errors_); }

 private:
  std::vector<FieldError> errors_;
};

enum class TextKind {
  kLine,  // one line: no control characters at all
  kText,  // may hold newlines and tabs (commands, descriptions, env values)
};

// Checks UTF-8 and control characters; records an error at `path` if `s` is not acceptable.
void CheckText(ErrorSink& sink, const std::string& path, absl::string_view s, TextKind kind);

// [a-z][a-z0-9_]*, at most 63 characters: port names.
bool IsPortName(absl::string_view s);
// A letter or digit, then letters, digits, '.', '_', '-', '/': label keys, host labels, job names
// (job names additionally exclude '/').
bool IsLabelKey(absl::string_view s);
// [A-Za-z_][A-Za-z0-9_]*: environment variable names.
bool IsEnvName(absl::string_view s);

// Checks a task's (or an override's) resource request under `path` ("task.resources").
void CheckTaskResources(ErrorSink& sink, const std::string& path, const Resources& r);

// Checks env names and values under `path` ("task.env").
void CheckEnv(ErrorSink& sink, const std::string& path,
              const std::map<std::string, std::string>& env);

// Checks the container of task `t` of `spec`, its fields named under `prefix` ("task",
// "roles[1].task", "instance_overrides.3"); container_validation.cc.
void CheckContainer(ErrorSink& sink, const JobSpec& spec, const TaskSpec& t,
                    const std::string& prefix);

// Checks task `t` of `spec`, its fields named under `prefix` (task_validation.cc).
void CheckTask(ErrorSink& sink, const JobSpec& spec, const TaskSpec& t, const std::string& prefix);

// Checks a task made from `base` (a role's from the template, an override's from its role's or
// the template): only the errors of the fields that differ from the base, or that depend on one
// that does, since the base's own check reports the rest.
void CheckDerivedTask(ErrorSink& sink, const JobSpec& spec, const TaskSpec& t, const TaskSpec& base,
                      const std::string& prefix);

// Whether the field `key` of a TaskSpec ("command", "health", ... as in YAML) differs between
// `a` and `b`; true for a key that is not a task field.
bool TaskFieldDiffers(const TaskSpec& a, const TaskSpec& b, absl::string_view key);

}  // namespace paceline::validation_internal
