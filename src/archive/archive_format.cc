#include "archive/archive_format.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "spec/yaml_spec.h"

namespace paceline::archive {
namespace {

using Json = nlohmann::ordered_json;

// RFC 3339 in UTC with milliseconds; null for "never".
Json Time(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) return nullptr;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

// The state of a job whose tasks have all ended, as `paceline job get` names it.
const char* StateOf(const records::JobHistory& h) {
  if (h.job.goal == records::JobGoal::kKill) return "KILLED";
  const uint32_t instances = h.job.instances != 0 ? h.job.instances : h.job.spec.instances;
  uint32_t succeeded = 0;
  bool failed = false;
  for (const records::TaskRecord& t : h.tasks) {
    succeeded += t.state == TaskState::kSucceeded;
    failed |= t.state == TaskState::kFailed || t.state == TaskState::kLost;
  }
  if (failed) return "FAILED";
  return succeeded == instances ? "SUCCEEDED" : "KILLED";
}

}  // namespace

absl::Time FinishedAt(const records::JobHistory& h) {
  absl::Time at = h.job.created_at;
  for (const records::TaskRecord& t : h.tasks) {
    if (t.finished_at != absl::InfinitePast()) at = std::max(at, t.finished_at);
  }
  return at;
}

std::string ArchiveLine(const records::JobHistory& h, absl::Time archived_at) {
  Json j;
  j["job_id"] = h.job.id.value();
  j["format"] = kFormatVersion;
  j["pool"] = h.job.pool;
  j["name"] = h.job.spec.name;
  j["type"] = std::string(JobTypeName(h.job.spec.type));
  j["state"] = StateOf(h);
  j["owner"] = h.job.owner;
  j["owner_group"] = h.job.owner_group;
  j["created_at"] = Time(h.job.created_at);
  j["finished_at"] = Time(FinishedAt(h));
  j["archived_at"] = Time(archived_at);
  j["version"] = h.job.version;
  j["goal"] = h.job.goal == records::JobGoal::kKill ? "kill" : "run";
  j["instances"] = h.job.instances != 0 ? h.job.instances : h.job.spec.instances;
  j["spec"] = PrintJobSpec(h.job.spec);
  Json tasks = Json::array();
  for (const records::TaskRecord& t : h.tasks) {
    tasks.push_back(Json{{"instance", t.id.instance},
                         {"run", t.run},
                         {"state", std::string(TaskStateName(t.state))},
                         {"host", t.host},
                         {"started_at", Time(t.started_at)},
                         {"finished_at", Time(t.finished_at)},
                         {"exit_code", t.exit_code},
                         {"signal", t.signal},
                         {"reason", t.reason},
                         {"message", t.message},
                         {"failures", t.failures}});
  }
  j["tasks"] = std::move(tasks);
  Json events = Json::array();
  for (const records::TaskEvent& e : h.events) {
    events.push_back(Json{{"instance", e.run.task.instance},
                          {"run", e.run.run},
                          {"at", Time(e.at)},
                          {"state", std::string(TaskStateName(e.state))},
                          {"host", e.host},
                          {"reason", e.reason},
                          {"message", e.message}});
  }
  j["events"] = std::move(events);
  // Invalid UTF-8 in a message (a task's output, say) is replaced, never a reason to fail.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DayOf(absl::Time t) { return absl::FormatTime("%Y-%m-%d", t, absl::UTCTimeZone()); }

std::string LinePrefix(JobId id) { return absl::StrCat("{\"job_id\":", id.value(), ","); }

bool InPool(absl::string_view pool, absl::string_view under) {
  if (under.empty() || under == "/") return true;
  return pool == under ||
         (absl::StartsWith(pool, under) && pool.size() > under.size() && pool[under.size()] == '/');
}

}  // namespace paceline::archive
