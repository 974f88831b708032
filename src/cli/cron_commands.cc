// `paceline job runs JOB`: the runs of a cron job (docs/specs.md "Cron jobs"), newest tick
// first: RUN (the run's job id), NAME, TICK, STATE, STARTED, ENDED, all times in UTC. JOB is the
// cron job's id or its name (the one cron job of that name the caller may read). The runs are
// the jobs labelled with the cron job's id (JobService.QueryJobs, every page). `-o json|yaml`
// prints {cron_job, runs: [{job_id, name, tick_unix_ms, state, started_at_unix_ms,
// finished_at_unix_ms}]}.

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/job.grpc.pb.h"
#include "spec/schedule_spec.h"
#include "spec/yaml_spec.h"

namespace paceline::cli {
namespace {

struct RunRow {
  v1::JobSummary job;
  int64_t tick_ms = 0;
};

// Every job matching `req`, all pages.
absl::StatusOr<std::vector<v1::JobSummary>> QueryAll(Rpc& rpc, v1::QueryJobsRequest req) {
  std::vector<v1::JobSummary> out;
  req.set_page_size(1000);
  while (true) {
    absl::StatusOr<v1::QueryJobsResponse> resp =
        rpc.Call(CallKind::kRead, &v1::JobService::Stub::QueryJobs, req);
    if (!resp.ok()) return resp.status();
    out.insert(out.end(), resp->jobs().begin(), resp->jobs().end());
    if (resp->next_page_token().empty()) return out;
    req.set_page_token(resp->next_page_token());
  }
}

// The cron job named by `arg`: an id, or the name of exactly one job that is not a run.
absl::StatusOr<uint64_t> ResolveCronJob(Rpc& rpc, const std::string& arg) {
  uint64_t id = 0;
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), absl::ascii_isdigit) &&
      absl::SimpleAtoi(arg, &id)) {
    return id;
  }
  v1::QueryJobsRequest req;
  req.set_name(arg);
  req.add_types("batch");
  absl::StatusOr<std::vector<v1::JobSummary>> jobs = QueryAll(rpc, req);
  if (!jobs.ok()) return jobs.status();
  std::vector<uint64_t> ids;
  for (const v1::JobSummary& j : *jobs) {
    if (!j.labels().contains(std::string(kCronJobLabel))) ids.push_back(j.id());
  }
  if (ids.empty()) {
    return absl::NotFoundError(absl::StrCat("no batch job is named '", arg, "'"));
  }
  if (ids.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(ids.size(), " jobs are named '", arg, "' (",
                                                      absl::StrJoin(ids, ", "),
                                                      "); give the cron job's id"));
  }
  return ids[0];
}

void PrintRuns(const ClientFlags& flags, uint64_t cron_job, const std::vector<RunRow>& runs) {
  nlohmann::json doc = {{"cron_job", cron_job}, {"runs", nlohmann::json::array()}};
  for (const RunRow& r : runs) {
    doc["runs"].push_back({{"job_id", r.job.id()},
                           {"name", r.job.name()},
                           {"tick_unix_ms", r.tick_ms},
                           {"state", r.job.state()},
                           {"started_at_unix_ms", r.job.started_at_unix_ms()},
                           {"finished_at_unix_ms", r.job.finished_at_unix_ms()}});
  }
  if (PrintStructured(flags, doc)) return;
  if (runs.empty()) {
    std::cout << "cron job " << cron_job << " has no runs" << std::endl;
    return;
  }
  Table t({"RUN", "NAME", "TICK", "STATE", "STARTED", "ENDED"});
  for (const RunRow& r : runs) {
    t.AddRow({absl::StrCat(r.job.id()), r.job.name(), FormatUnixMillis(r.tick_ms), r.job.state(),
              FormatUnixMillis(r.job.started_at_unix_ms()),
              FormatUnixMillis(r.job.finished_at_unix_ms())});
  }
  std::cout << t.Render() << std::flush;
}

}  // namespace

std::string ScheduleLine(const ScheduleSpec& s) {
  std::string out = absl::StrCat("\"", s.cron, "\" in ", s.time_zone, ", concurrency ",
                                 ConcurrencyPolicyName(s.concurrency));
  if (s.starting_deadline) {
    absl::StrAppend(&out, ", starting deadline ", FormatDurationShort(*s.starting_deadline));
  }
  absl::StrAppend(&out, ", keeps ", s.keep_succeeded, " succeeded and ", s.keep_failed,
                  " failed runs");
  if (s.suspend) absl::StrAppend(&out, ", SUSPENDED");
  return out;
}

void AddJobRunsCommand(CLI::App& job, CommandContext& ctx) {
  static std::string arg;
  CLI::App* runs = job.add_subcommand("runs", "the runs of a cron job, newest first");
  runs->add_option("job", arg, "the cron job's id or name")->required();
  runs->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    absl::StatusOr<uint64_t> id = ResolveCronJob(*rpc, arg);
    if (!id.ok()) return ctx.Fail(id.status());
    v1::GetJobRequest get;
    get.set_job_id(*id);
    absl::StatusOr<v1::GetJobResponse> cron =
        rpc->Call(CallKind::kRead, &v1::JobService::Stub::GetJob, get);
    if (!cron.ok()) return ctx.Fail(cron.status());
    absl::StatusOr<JobSpec> spec = ParseJobSpec(cron->spec_yaml(), "stored spec");
    if (spec.ok() && !spec->schedule) {
      return ctx.Fail(absl::FailedPreconditionError(absl::StrCat(
          "job ", *id, " is not a cron job (its spec has no schedule); its runs are itself")));
    }
    v1::QueryJobsRequest req;
    (*req.mutable_labels())[std::string(kCronJobLabel)] = absl::StrCat(*id);
    absl::StatusOr<std::vector<v1::JobSummary>> jobs = QueryAll(*rpc, req);
    if (!jobs.ok()) return ctx.Fail(jobs.status());
    std::vector<RunRow> out;
    for (v1::JobSummary& j : *jobs) {
      int64_t tick = 0;
      auto l = j.labels().find(std::string(kCronTickLabel));
      if (l != j.labels().end()) (void)absl::SimpleAtoi(l->second, &tick);
      out.push_back({std::move(j), tick * 1000});
    }
    std::sort(out.begin(), out.end(), [](const RunRow& a, const RunRow& b) {
      return a.tick_ms != b.tick_ms ? a.tick_ms > b.tick_ms : a.job.id() > b.job.id();
    });
    PrintRuns(ctx.client, *id, out);
  });
}

}  // namespace paceline::cli
