// `paceline job watch [JOB]`: prints job and task events as they happen (JobService.Watch).
// With a job id it ends when the job reaches a final state or is deleted; without one it runs
// until interrupted. `-o json` prints one JSON object per line.

#include <google/protobuf/util/json_util.h>

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "common/task_state.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

std::string TimeOf(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string LineOf(const v1::WatchEvent& e) {
  if (e.has_task()) {
    const v1::TaskEvent& t = e.task().event();
    std::string line =
        absl::StrCat(TimeOf(e.at_unix_ms()), "  ", e.job_id(), "/", e.task().instance(), " run ",
                     t.run(), "  ", v1::Task::State_Name(t.state()));
    if (!t.host().empty()) absl::StrAppend(&line, "  host=", t.host());
    if (!t.reason().empty()) absl::StrAppend(&line, "  ", t.reason());
    if (!t.message().empty()) absl::StrAppend(&line, ": ", t.message());
    return line;
  }
  if (e.has_job()) {
    std::vector<std::string> counts;
    for (const auto& [state, n] : e.job().task_counts())
      counts.push_back(absl::StrCat(state, "=", n));
    std::sort(counts.begin(), counts.end());
    return absl::StrCat(TimeOf(e.at_unix_ms()), "  job ", e.job_id(), "  ", e.job().state(),
                        counts.empty() ? "" : "  ", absl::StrJoin(counts, " "));
  }
  return absl::StrCat(TimeOf(e.at_unix_ms()), "  watching");
}

bool Ends(const v1::WatchEvent& e, uint64_t job) {
  if (job == 0 || !e.has_job()) return false;
  if (e.job().state() == "DELETED") return true;
  std::optional<JobState> s = JobStateFromName(e.job().state());
  return s && IsTerminal(*s);
}

}  // namespace

void AddJobWatchCommand(CLI::App& job, CommandContext& ctx) {
  static uint64_t job_id = 0;
  CLI::App* watch = job.add_subcommand(
      "watch", "print job and task events as they happen (one job, or every job)");
  watch->add_option("job", job_id, "job id; ends when the job ends (default: every job, forever)");
  watch->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::WatchRequest req;
    req.set_job_id(job_id);
    std::unique_ptr<grpc::ClientContext> call = rpc->Context(std::chrono::milliseconds(0));
    auto reader = v1::JobService::NewStub(rpc->channel())->Watch(call.get(), req);
    google::protobuf::util::JsonPrintOptions json;
    json.preserve_proto_field_names = true;
    json.always_print_primitive_fields = true;
    v1::WatchEvent e;
    while (reader->Read(&e)) {
      if (e.kind_case() == v1::WatchEvent::KIND_NOT_SET) continue;  // a heartbeat
      if (ctx.client.format() == OutputFormat::kJson) {
        std::string line;
        (void)google::protobuf::util::MessageToJsonString(e, &line, json);
        std::cout << line << std::endl;
      } else if (ctx.client.format() == OutputFormat::kYaml) {
        std::cout << "---\n";
        PrintProtoYaml(e);
      } else {
        std::cout << LineOf(e) << std::endl;
      }
      if (Ends(e, job_id)) {
        call->TryCancel();
        return;
      }
    }
    grpc::Status s = reader->Finish();
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
  });
}

}  // namespace paceline::cli
