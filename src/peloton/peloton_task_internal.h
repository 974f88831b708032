#pragma once
// Peloton's TaskConfig (a job's defaultConfig and each instanceConfig entry), read and
// converted into Paceline's TaskSpec. Internal to src/peloton.
//
// Peloton merged an instanceConfig entry over defaultConfig field by field at the top level: a
// field the entry sets replaces the default's whole field (an instance `command` with only a
// value loses the default's environment); the booleans `controller` and `revocable` always
// take the entry's value, false when the entry leaves them out. MergeTask does the same.
//
// Thread-safety: pure functions over the caller's Context.

#include <map>
#include <optional>
#include <string>

#include "peloton/peloton_internal.h"
#include "spec/job_spec.h"

namespace paceline::peloton {

// The top-level fields of one TaskConfig as written (null and [] left out).
struct TaskFields {
  Field where;                          // the TaskConfig itself
  std::map<std::string, Field> fields;  // by Peloton key (camelCase)
  std::optional<Field> Get(const std::string& key) const;
};
// Checks the keys; nullopt when `f` is not a map.
std::optional<TaskFields> ReadTaskFields(const Field& f, Context& ctx);
// Peloton's merge of an instanceConfig entry over defaultConfig.
TaskFields MergeTask(const TaskFields& base, const TaskFields& entry);

// One TaskConfig converted.
struct TaskConversion {
  TaskSpec task;
  std::map<std::string, std::string> labels;  // the task's labels (Paceline keeps job labels)
  bool revocable = false;
  std::optional<bool> preemptible;  // preemptionPolicy.type, when it says
  bool has_volume = false;
};

// `type`: the job's Peloton type (batch or service). `job_labels`: the job's labels with the
// default task's, which TASK-kind constraints count.
TaskConversion ConvertTask(const TaskFields& t, JobType type,
                           const std::map<std::string, std::string>& job_labels, Context& ctx);

// Reads Peloton's [{key, value}] labels into `out`; a key given twice is an error.
void ReadLabels(const Field& f, std::map<std::string, std::string>& out, Context& ctx);

}  // namespace paceline::peloton
