// Peloton's JobConfig converted into a JobSpec (peloton.h).

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "peloton/peloton.h"
#include "peloton/peloton_task_internal.h"
#include "spec/field_path.h"
#include "spec/spec_validation.h"

namespace paceline::peloton {
namespace {

using yaml_internal::Quote;

constexpr std::array<absl::string_view, 14> kJobKeys = {"changeLog",
                                                        "name",
                                                        "type",
                                                        "owningTeam",
                                                        "ldapGroups",
                                                        "description",
                                                        "labels",
                                                        "instanceCount",
                                                        "sla",
                                                        "defaultConfig",
                                                        "instanceConfig",
                                                        "respoolID",
                                                        "owner",
                                                        "placementStrategy"};
constexpr std::array<absl::string_view, 9> kSlaKeys = {
    "priority", "preemptible", "revocable", "maximumRunningInstances", "minimumRunningInstances",
    "maxRunningTime", "maximumUnavailableInstances",
    // Not fields of Peloton's SlaConfig, but in many of its example files; its CLI dropped them.
    "minimumInstanceCount", "minimumInstancePercent"};
constexpr std::array<absl::string_view, 3> kJobTypes = {"BATCH", "SERVICE", "DAEMON"};
constexpr std::array<absl::string_view, 3> kPlacementStrategies = {
    "PLACEMENT_STRATEGY_INVALID", "PLACEMENT_STRATEGY_PACK_HOST", "PLACEMENT_STRATEGY_SPREAD_JOB"};
constexpr absl::string_view kLdapGroupsLabel = "peloton.ldap-groups";
constexpr absl::string_view kOwningTeamLabel = "peloton.owning-team";

struct Sla {
  int64_t priority = 0;
  bool preemptible = false;  // Peloton's default
  std::optional<Field> revocable_field;
  bool revocable = false;
  int64_t max_running = 0;
  std::optional<Field> max_running_field;
  int64_t min_running = 0;
  std::optional<Field> min_running_field;
  int64_t max_running_time = 0;
  int64_t max_unavailable = 0;
};

Sla ReadSla(const Field& f, Context& ctx) {
  MapReader m =
      PelotonMap(f, kSlaKeys, "expected a map such as {priority: 10, preemptible: true}", ctx);
  Sla s;
  auto uint = [&](absl::string_view key, int64_t& out) -> std::optional<Field> {
    std::optional<Field> v = Present(m, key);
    if (!v) return std::nullopt;
    if (auto n = yaml_internal::ReadInt(*v, 0, 0xffffffffLL, ctx.diag)) out = *n;
    return v;
  };
  if (std::optional<Field> p = uint("priority", s.priority); p && s.priority > kMaxPriority) {
    ctx.diag.Error(p->loc, p->path,
                   absl::StrCat(s.priority, " is out of range; expected 0 to ", kMaxPriority));
  }
  if (std::optional<Field> p = Present(m, "preemptible")) {
    if (auto b = yaml_internal::ReadBool(*p, ctx.diag)) s.preemptible = *b;
  }
  if ((s.revocable_field = Present(m, "revocable"))) {
    if (auto b = yaml_internal::ReadBool(*s.revocable_field, ctx.diag)) s.revocable = *b;
  }
  s.max_running_field = uint("maximumRunningInstances", s.max_running);
  s.min_running_field = uint("minimumRunningInstances", s.min_running);
  uint("maxRunningTime", s.max_running_time);
  uint("maximumUnavailableInstances", s.max_unavailable);
  for (absl::string_view key : {"minimumInstanceCount", "minimumInstancePercent"}) {
    if (std::optional<Field> v = Present(m, key)) {
      ctx.Warn(*v,
               "is not kept: it is not a field of Peloton's SLA, and Peloton's CLI dropped "
               "it; for a gang use minimumRunningInstances");
    }
  }
  return s;
}

// Checks the counts as Peloton did at create, then fills `spec.sla`.
void ApplySla(const Sla& s, const TaskConversion& task, JobSpec& spec, Context& ctx) {
  spec.priority = static_cast<int32_t>(std::min<int64_t>(s.priority, kMaxPriority));
  spec.sla.preemptible = task.preemptible.value_or(s.preemptible);
  spec.sla.revocable = task.revocable;
  if (s.revocable_field && s.revocable != task.revocable) {
    ctx.Warn(*s.revocable_field,
             absl::StrCat("is ", s.revocable ? "true" : "false", " and defaultConfig.revocable is ",
                          task.revocable ? "true" : "false",
                          ": Peloton placed tasks by defaultConfig.revocable, and so does this "
                          "conversion"));
  }
  const bool service = spec.type != JobType::kBatch;
  const int64_t count = spec.instances;
  if (s.max_running_field && service && s.max_running > 0) {
    ctx.diag.Error(s.max_running_field->loc, s.max_running_field->path,
                   "is set on a SERVICE job, which Peloton refused too; expected 0 (a rolling "
                   "update's pace is update.batch_size in the converted spec)");
  } else if (s.max_running_field && s.max_running > count) {
    ctx.diag.Error(s.max_running_field->loc, s.max_running_field->path,
                   absl::StrCat(s.max_running, " is above instanceCount (", count,
                                "), which Peloton refused too; expected at most ", count));
  }
  const int64_t ceiling = s.max_running > 0 ? s.max_running : count;
  if (s.min_running_field && service && s.min_running > 0) {
    ctx.diag.Error(s.min_running_field->loc, s.min_running_field->path,
                   "is set on a SERVICE job, which Peloton refused too; a gang is a BATCH job's");
  } else if (s.min_running_field && s.min_running > ceiling) {
    ctx.diag.Error(
        s.min_running_field->loc, s.min_running_field->path,
        absl::StrCat(s.min_running, " is above ",
                     s.max_running > 0 ? "maximumRunningInstances" : "instanceCount", " (", ceiling,
                     "), which Peloton refused too; expected at most ", ceiling));
  }
  spec.sla.max_running_instances = static_cast<uint32_t>(s.max_running);
  spec.sla.min_running_instances = static_cast<uint32_t>(std::max<int64_t>(s.min_running, 1));
  spec.sla.max_running_time = absl::Seconds(s.max_running_time);
  if (s.max_unavailable > 0) {
    spec.sla.max_unavailable_instances = static_cast<uint32_t>(s.max_unavailable);
  }
}

// The Peloton key that holds what differs between two converted tasks and that Paceline keeps
// per job, not per instance; empty when nothing does.
std::string JobLevelDifference(const TaskConversion& a, const TaskConversion& b) {
  if (a.labels != b.labels) return "labels";
  if (a.preemptible != b.preemptible) return "preemptionPolicy";
  if (a.revocable != b.revocable) return "revocable";
  if (a.has_volume != b.has_volume) return "volume";
  return "";
}

// An instanceConfig entry becomes the instance's override: its whole task, as Peloton merged
// the entry over defaultConfig.
void ConvertInstance(const Field& entry_field, uint32_t id, const TaskFields& defaults,
                     const TaskConversion& base, const std::map<std::string, std::string>& labels,
                     JobSpec& spec, Context& ctx) {
  std::optional<TaskFields> entry = ReadTaskFields(entry_field, ctx);
  if (!entry) return;
  const TaskFields merged = MergeTask(defaults, *entry);
  TaskConversion t = ConvertTask(merged, spec.type, labels, ctx);
  if (std::string key = JobLevelDifference(base, t); !key.empty()) {
    std::optional<Field> where = entry->Get(key);
    const Field& at = where ? *where : entry_field;
    std::string why =
        key == "revocable"
            ? "Peloton gave this instance its entry's revocable (false when the entry leaves it "
              "out), unlike defaultConfig's; Paceline's revocable is the job's: repeat "
              "defaultConfig's value in the entry, or make the instance a job of its own"
        : key == "volume"
            ? absl::StrCat("is ", t.has_volume ? "given" : "not given",
                           " here and defaultConfig's is ", base.has_volume ? "" : "not ",
                           "; in Paceline, every instance of a stateful job has a volume and "
                           "no instance of another job has one: make the instance a job of its "
                           "own")
            : absl::StrCat("differs from defaultConfig's, and Paceline keeps ", key,
                           " per job, not per instance: make the instance a job of its own");
    ctx.diag.Error(at.loc, where ? at.path : ChildPath(at.path, key), why);
    return;
  }
  if (t.task == base.task) return;
  // Errors that validation finds in the override are placed at the entry.
  ctx.diag.Record(ChildPath("instance_overrides", absl::StrCat(id)), entry_field.loc);
  spec.OverrideTask(id) = std::move(t.task);
}

void ReadInstances(const Field& f, const TaskFields& defaults, const TaskConversion& base,
                   const std::map<std::string, std::string>& labels, JobSpec& spec, Context& ctx) {
  MapReader m(f, "expected a map from instance id to a TaskConfig, such as {0: {command: ...}}",
              ctx.diag);
  for (const auto& [key, entry] : m.entries()) {
    uint32_t n = 0;
    if (key.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(key[0])) ||
        !absl::SimpleAtoi(key, &n)) {
      ctx.diag.Error(entry.loc, entry.path,
                     absl::StrCat(Quote(key), " is not an instance id; expected 0 to ",
                                  spec.instances == 0 ? 0 : spec.instances - 1));
      continue;
    }
    if (n >= spec.instances) {
      ctx.diag.Error(
          entry.loc, entry.path,
          absl::StrCat("instance ", n, " is not below instanceCount (", spec.instances,
                       "); expected 0 to ", spec.instances == 0 ? 0 : spec.instances - 1));
      continue;
    }
    if (entry.node.IsNull()) continue;
    ConvertInstance(entry, n, defaults, base, labels, spec, ctx);
  }
}

JobSpec ReadJob(const Field& root, Context& ctx) {
  JobSpec spec;
  MapReader m = PelotonMap(root, kJobKeys, "expected a Peloton JobConfig map", ctx);
  if (!m.ok()) return spec;
  if (std::optional<Field> f = Present(m, "changeLog")) {
    ctx.Warn(*f, "is not kept: Peloton's server sets it");
  }
  // Errors that validation finds on the converted spec are placed at the Peloton fields.
  ctx.diag.Record("", root.loc);
  if (std::optional<Field> f = m.Require("name", "expected the job's name")) {
    ctx.diag.Record("name", f->loc);
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) spec.name = *s;
  }
  if (std::optional<Field> f = Present(m, "type")) {
    if (auto t = ReadPelotonEnum(*f, kJobTypes, ctx)) {
      if (*t == 2) {
        ctx.diag.Error(f->loc, f->path,
                       "is DAEMON, which Peloton refused; Paceline runs one instance on every "
                       "host with `type: daemon` in a Paceline spec");
      } else {
        spec.type = *t == 1 ? JobType::kService : JobType::kBatch;
      }
    }
  }
  if (std::optional<Field> f = Present(m, "description")) {
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) spec.description = *s;
  }
  if (std::optional<Field> f = Present(m, "labels")) ReadLabels(*f, spec.labels, ctx);
  std::string owning_team;
  if (std::optional<Field> f = Present(m, "owningTeam")) {
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) owning_team = *s;
  }
  if (std::optional<Field> f = Present(m, "owner")) {
    if (auto s = yaml_internal::ReadString(*f, ctx.diag)) spec.owner = *s;
  }
  if (spec.owner.empty()) {
    spec.owner = owning_team;
  } else if (!owning_team.empty() && owning_team != spec.owner) {
    spec.labels[std::string(kOwningTeamLabel)] = owning_team;
  }
  if (std::optional<Field> f = Present(m, "ldapGroups")) {
    if (auto groups = yaml_internal::ReadStringList(*f, ctx.diag); groups && !groups->empty()) {
      spec.labels[std::string(kLdapGroupsLabel)] = absl::StrJoin(*groups, ",");
      ctx.Warn(*f, absl::StrCat("are kept as the label ", kLdapGroupsLabel,
                                " and grant nothing: in Paceline, who may act on a pool's jobs "
                                "is given by roles on the pool (`paceline token create --role "
                                "submitter --pool /POOL`)"));
    }
  }
  if (std::optional<Field> f = Present(m, "respoolID")) {
    ctx.Warn(*f,
             "is not kept: the job's pool is the one it is created in (--pool), as "
             "Peloton's CLI overwrote it with the pool it was given");
  }
  if (std::optional<Field> f = Present(m, "placementStrategy")) {
    if (auto p = ReadPelotonEnum(*f, kPlacementStrategies, ctx); p && *p != 0) {
      ctx.diag.Error(f->loc, f->path,
                     absl::StrCat("is ", kPlacementStrategies[*p],
                                  "; Paceline places every job by its own placement scoring: "
                                  "remove it (to spread instances, limit them per host with a "
                                  "TASK constraint: CONDITION_LESS_THAN N)"));
    }
  }
  if (std::optional<Field> f = Present(m, "instanceCount")) {
    ctx.diag.Record("instances", f->loc);
    if (auto n = yaml_internal::ReadInt(*f, 0, kMaxInstances, ctx.diag)) {
      spec.instances = static_cast<uint32_t>(*n);
    }
  }
  Sla sla;
  if (std::optional<Field> f = Present(m, "sla")) {
    ctx.diag.Record("sla", f->loc);
    ctx.diag.Record("priority", f->loc);
    sla = ReadSla(*f, ctx);
  }
  if (std::optional<Field> f = Present(m, "labels")) ctx.diag.Record("labels", f->loc);

  std::optional<Field> dc = m.Require("defaultConfig", "expected the TaskConfig of every instance");
  std::optional<TaskFields> defaults = dc ? ReadTaskFields(*dc, ctx) : std::nullopt;
  if (!defaults) return spec;
  ctx.diag.Record("task", dc->loc);
  for (const auto& [key, path] : std::initializer_list<std::pair<const char*, const char*>>{
           {"resource", "task.resources"},
           {"command", "task.command"},
           {"healthCheck", "task.health"},
           {"ports", "task.ports"},
           {"constraint", "task.constraints"},
           {"restartPolicy", "task.restart"},
           {"volume", "task.volume"},
           {"killGracePeriodSeconds", "task.kill_grace"}}) {
    if (std::optional<Field> f = defaults->Get(key)) ctx.diag.Record(path, f->loc);
  }
  TaskConversion base = ConvertTask(*defaults, spec.type, spec.labels, ctx);
  for (const auto& [k, v] : base.labels) {
    auto [it, inserted] = spec.labels.emplace(k, v);
    if (!inserted && it->second != v) {
      ctx.diag.Error(
          dc->loc, ChildPath(dc->path, "labels"),
          absl::StrCat("sets ", Quote(k), " to ", Quote(v), " and the job's labels to ",
                       Quote(it->second), "; Paceline keeps labels per job: give them one value"));
    }
  }
  if (base.has_volume) {
    if (spec.type == JobType::kService) {
      spec.type = JobType::kStateful;
    } else if (std::optional<Field> v = defaults->Get("volume")) {
      ctx.diag.Error(v->loc, v->path,
                     "is on a BATCH job; Paceline keeps volumes for jobs that run on (type "
                     "SERVICE, which becomes a stateful job); remove it or make the job a "
                     "SERVICE");
    }
  }
  spec.task = base.task;
  ApplySla(sla, base, spec, ctx);
  if (std::optional<Field> f = Present(m, "instanceConfig")) {
    ReadInstances(*f, *defaults, base, spec.labels, spec, ctx);
  }
  return spec;
}

}  // namespace

absl::StatusOr<Converted<JobSpec>> ConvertJob(absl::string_view yaml_text,
                                              absl::string_view file_name) {
  return ConvertDocument<JobSpec>(yaml_text, file_name, "Peloton job config", ReadJob,
                                  [](const JobSpec& s) { return ValidateJobSpec(s); });
}

}  // namespace paceline::peloton
