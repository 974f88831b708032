#include "cli/usage_command.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "nlohmann/json.hpp"
#include "paceline/v1/pool.grpc.pb.h"

namespace paceline::cli {
namespace {

struct UsageFlags {
  std::string since = "30d";
  std::string until;
  std::string by = "pool";
  std::string pool;
  bool hourly = false;
};

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}}), "\"");
}

std::string Hours(double seconds) { return absl::StrFormat("%.2f", seconds / 3600.0); }

// The columns that name an entry: the hour (hourly), the group's key, a job's name and pool.
std::vector<std::string> KeyHeaders(const UsageFlags& f) {
  std::vector<std::string> h;
  if (f.hourly) h.push_back("hour");
  h.push_back(f.by);
  if (f.by == "job") {
    h.push_back("name");
    h.push_back("pool");
  }
  return h;
}
std::vector<std::string> KeyCells(const UsageFlags& f, const v1::UsageEntry& e) {
  std::vector<std::string> c;
  if (f.hourly) c.push_back(FormatUnixMillis(e.hour_unix_ms()));
  c.push_back(e.key().empty() ? "-" : e.key());
  if (f.by == "job") {
    c.push_back(e.job_name());
    c.push_back(e.pool());
  }
  return c;
}

void Print(const ClientFlags& client, const UsageFlags& f, const v1::GetUsageResponse& resp,
           int64_t since_ms, int64_t until_ms) {
  if (client.output == "csv") {
    std::vector<std::string> h = KeyHeaders(f);
    for (const char* c : {"cpu_seconds", "memory_byte_seconds", "gpu_seconds", "tasks"}) {
      h.push_back(c);
    }
    std::cout << absl::StrJoin(h, ",") << "\n";
    for (const v1::UsageEntry& e : resp.entries()) {
      std::vector<std::string> row;
      for (const std::string& c : KeyCells(f, e)) row.push_back(Csv(c));
      row.push_back(absl::StrFormat("%.3f", e.cpu_seconds()));
      row.push_back(absl::StrFormat("%.0f", e.memory_byte_seconds()));
      row.push_back(absl::StrFormat("%.3f", e.gpu_seconds()));
      row.push_back(absl::StrCat(e.tasks()));
      std::cout << absl::StrJoin(row, ",") << "\n";
    }
    std::cout << std::flush;
    return;
  }
  nlohmann::json doc = {{"group_by", resp.group_by()},
                        {"since_unix_ms", since_ms},
                        {"until_unix_ms", until_ms},
                        {"entries", nlohmann::json::array()}};
  for (const v1::UsageEntry& e : resp.entries()) {
    nlohmann::json j = {{"key", e.key()}};
    if (f.by == "job") {
      j["job_name"] = e.job_name();
      j["pool"] = e.pool();
    }
    if (f.hourly) j["hour_unix_ms"] = e.hour_unix_ms();
    j["cpu_seconds"] = e.cpu_seconds();
    j["memory_byte_seconds"] = e.memory_byte_seconds();
    j["gpu_seconds"] = e.gpu_seconds();
    j["tasks"] = e.tasks();
    doc["entries"].push_back(std::move(j));
  }
  if (PrintStructured(client, doc)) return;
  std::vector<std::string> h = KeyHeaders(f);
  for (const char* c : {"cpu-hours", "memory-gib-hours", "gpu-hours", "tasks"}) h.push_back(c);
  Table t(h);
  for (const v1::UsageEntry& e : resp.entries()) {
    std::vector<std::string> row = KeyCells(f, e);
    row.push_back(Hours(e.cpu_seconds()));
    row.push_back(Hours(e.memory_byte_seconds() / double(int64_t{1} << 30)));
    row.push_back(Hours(e.gpu_seconds()));
    row.push_back(absl::StrCat(e.tasks()));
    t.AddRow(std::move(row));
  }
  std::cout << t.Render();
  if (resp.entries().empty()) std::cout << "(no usage in this range)" << std::endl;
}

}  // namespace

void RegisterUsageCommand(CLI::App& app, CommandContext& ctx) {
  static UsageFlags f;
  CLI::App* usage = app.add_subcommand(
      "usage", "what the runs of jobs held (cpu, memory, gpu x seconds, runs) over a time range");
  usage
      ->add_option("--since", f.since,
                   "from: a duration ago (12h, 30d) or an RFC 3339 time; usage is kept by hour, "
                   "so this reads from the start of its hour")
      ->capture_default_str();
  usage->add_option("--until", f.until, "up to (exclusive): a duration ago or an RFC 3339 time");
  usage->add_option("--by", f.by, "sum by pool, user, job or owner")
      ->check(CLI::IsMember({"pool", "user", "job", "owner"}))
      ->capture_default_str();
  usage->add_option("--pool", f.pool, "only this pool and the pools below it");
  usage->add_flag("--hourly", f.hourly, "one line per hour and group, oldest hour first");
  usage->callback([&ctx] {
    absl::StatusOr<int64_t> since = TimeFlagMillis("--since", f.since);
    if (!since.ok()) return ctx.Fail(since.status());
    absl::StatusOr<int64_t> until = TimeFlagMillis("--until", f.until);
    if (!until.ok()) return ctx.Fail(until.status());
    v1::GetUsageRequest req;
    req.set_since_unix_ms(*since);
    req.set_until_unix_ms(*until);
    req.set_group_by(f.by);
    req.set_pool(f.pool);
    req.set_hourly(f.hourly);
    absl::StatusOr<v1::GetUsageResponse> resp =
        Call(ctx.client, CallKind::kRead, &v1::PoolService::Stub::GetUsage, req);
    if (!resp.ok()) return ctx.Fail(resp.status());
    Print(ctx.client, f, *resp, *since, *until);
  });
}

}  // namespace paceline::cli
