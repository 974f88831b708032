#include "cli/archive_commands.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "nlohmann/json.hpp"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string Str(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// "2026-11-26T03:00:00.000Z" -> "2026-11-26 03:00:00", like the other tables.
std::string Time(const Json& j, const char* key) {
  std::string t = Str(j, key);
  if (t.size() >= 19 && t[10] == 'T') t = t.substr(0, 10) + " " + t.substr(11, 8);
  return t;
}

absl::StatusOr<Json> Parse(const std::string& line) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return absl::DataLossError("the master sent an archive line that is not JSON");
  return j;
}

struct QueryFlags {
  std::string since, until, pool;
  uint32_t limit = 100;
};

}  // namespace

void ShowArchivedJob(CommandContext& ctx, uint64_t id) {
  v1::GetArchivedJobRequest req;
  req.set_job_id(id);
  absl::StatusOr<v1::GetArchivedJobResponse> resp =
      Call(ctx.client, CallKind::kRead, &v1::JobService::Stub::GetArchivedJob, req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  absl::StatusOr<Json> j = Parse(resp->json());
  if (!j.ok()) return ctx.Fail(j.status());
  if (PrintStructured(ctx.client, nlohmann::json::parse(resp->json()))) return;
  Table t({"id", "name", "type", "pool", "state", "instances", "created", "finished", "archived"});
  t.AddRow({Str(*j, "job_id"), Str(*j, "name"), Str(*j, "type"), Str(*j, "pool"), Str(*j, "state"),
            Str(*j, "instances"), Time(*j, "created_at"), Time(*j, "finished_at"),
            Time(*j, "archived_at")});
  std::cout << t.Render();
  Table tasks({"instance", "run", "state", "host", "exit", "reason", "finished"});
  for (const Json& task : (*j)["tasks"]) {
    tasks.AddRow({Str(task, "instance"), Str(task, "run"), Str(task, "state"), Str(task, "host"),
                  Str(task, "exit_code"), Str(task, "reason"), Time(task, "finished_at")});
  }
  if (tasks.size() > 0) std::cout << "\n" << tasks.Render();
  std::cout << "(archived: " << (*j)["events"].size() << " events; -o json prints the whole record)"
            << std::endl;
}

void RegisterHistoryCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* history = AddGroup(app, "history", "jobs retired to the archive after their retention");
  static QueryFlags f;
  CLI::App* query =
      history->add_subcommand("query", "archived jobs that finished in a time range, oldest first");
  query->add_option("--since", f.since,
                    "finished at or after: a duration ago (2h, 7d) or an RFC 3339 time");
  query->add_option("--until", f.until,
                    "finished before: a duration ago (2h, 7d) or an RFC 3339 time");
  query->add_option("--pool", f.pool, "only this pool and the pools below it");
  query->add_option("--limit", f.limit, "at most this many jobs (at most 10000)")
      ->capture_default_str();
  query->callback([&ctx] {
    v1::QueryArchiveRequest req;
    absl::StatusOr<int64_t> since = TimeFlagMillis("--since", f.since);
    if (!since.ok()) return ctx.Fail(since.status());
    absl::StatusOr<int64_t> until = TimeFlagMillis("--until", f.until);
    if (!until.ok()) return ctx.Fail(until.status());
    req.set_since_unix_ms(*since);
    req.set_until_unix_ms(*until);
    req.set_pool(f.pool);
    req.set_limit(f.limit);
    absl::StatusOr<v1::QueryArchiveResponse> resp =
        Call(ctx.client, CallKind::kRead, &v1::JobService::Stub::QueryArchive, req);
    if (!resp.ok()) return ctx.Fail(resp.status());
    std::vector<Json> jobs;
    for (const std::string& line : resp->jobs()) {
      absl::StatusOr<Json> j = Parse(line);
      if (!j.ok()) return ctx.Fail(j.status());
      jobs.push_back(*std::move(j));
    }
    nlohmann::json doc = {{"jobs", nlohmann::json::array()}, {"truncated", resp->truncated()}};
    for (const std::string& line : resp->jobs()) doc["jobs"].push_back(nlohmann::json::parse(line));
    if (PrintStructured(ctx.client, doc)) return;
    Table t({"id", "name", "type", "pool", "state", "instances", "finished"});
    for (const Json& j : jobs) {
      t.AddRow({Str(j, "job_id"), Str(j, "name"), Str(j, "type"), Str(j, "pool"), Str(j, "state"),
                Str(j, "instances"), Time(j, "finished_at")});
    }
    std::cout << t.Render();
    if (resp->truncated()) {
      std::cout << "(more jobs matched: narrow --since/--until, or raise --limit)" << std::endl;
    }
  });
}

}  // namespace paceline::cli
