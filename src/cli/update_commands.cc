// Rolling updates from the command line:
//   paceline job update JOB [-f SPEC] [--instances N] [--batch-size N] [--max-failures K]
//                       [--rollback-on-failure] [--in-place] [--min-healthy-time D] [--paused]
//                       [--dry-run] [--override] [--version V]
//   paceline job rollback JOB [--to VERSION]
//   paceline update get|list|pause|resume|abort|wait JOB
// The CLI fills in the version an update replaces from `job get` unless --version is given.

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/peloton_commands.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/units.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

struct UpdateFlags {
  uint64_t job = 0;
  std::string file;
  std::string format = "paceline";
  uint32_t instances = 0;
  std::optional<uint32_t> batch_size;
  std::optional<uint32_t> max_failures;
  bool rollback_on_failure = false;
  bool in_place = false;
  std::string min_healthy_time;
  bool paused = false;
  bool dry_run = false;
  bool override_active = false;
  uint64_t version = 0;
  uint64_t to_version = 0;
  uint64_t update_id = 0;
  std::string timeout = "0";
};

UpdateFlags& Flags() {
  static UpdateFlags f;
  return f;
}

absl::StatusOr<v1::UpdateOptions> OptionsFromFlags(const UpdateFlags& f) {
  v1::UpdateOptions o;
  if (f.batch_size) o.set_batch_size(*f.batch_size);
  if (f.max_failures) o.set_max_failures(*f.max_failures);
  if (f.rollback_on_failure) o.set_rollback_on_failure(true);
  if (f.in_place) o.set_in_place(true);
  if (!f.min_healthy_time.empty()) {
    absl::StatusOr<absl::Duration> d = ParseDurationStrict(f.min_healthy_time);
    if (!d.ok()) return WithFlag(d.status(), "--min-healthy-time");
    o.set_min_healthy_time_ms(absl::ToInt64Milliseconds(*d));
  }
  return o;
}

std::string List(const google::protobuf::RepeatedField<uint32_t>& ids) {
  if (ids.empty()) return "none";
  return absl::StrJoin(ids, ",");
}

void PrintUpdates(const std::vector<v1::UpdateInfo>& updates) {
  Table t({"id", "state", "versions", "done", "in flight", "failed", "batch", "started", "finished",
           "message"});
  for (const v1::UpdateInfo& u : updates) {
    t.AddRow({absl::StrCat(u.id()),
              absl::StrCat(v1::Update::State_Name(u.state()), u.paused() ? " (paused)" : ""),
              absl::StrCat(u.from_version(), " -> ", u.to_version()),
              absl::StrCat(u.done(), "/", u.total()), absl::StrCat(u.in_flight()),
              absl::StrCat(u.failed()), absl::StrCat(u.batch_size()),
              FormatUnixMillis(u.started_at_unix_ms()), FormatUnixMillis(u.finished_at_unix_ms()),
              u.message()});
  }
  std::cout << t.Render();
}

void RunUpdate(CommandContext& ctx) {
  const UpdateFlags& f = Flags();
  absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
  if (!rpc.ok()) return ctx.Fail(rpc.status());
  v1::UpdateJobRequest req;
  req.set_job_id(f.job);
  if (!f.file.empty() && f.format == "peloton") {
    absl::StatusOr<std::string> yaml = JobSpecYaml(f.file, f.format);
    if (!yaml.ok()) return ctx.Fail(yaml.status());
    req.set_spec_yaml(*yaml);
    req.set_spec_name(SpecName(f.file, f.format));
  } else if (!f.file.empty()) {
    std::ifstream in(f.file);
    if (!in) return ctx.Fail(absl::NotFoundError(absl::StrCat("-f: cannot read ", f.file)));
    std::stringstream text;
    text << in.rdbuf();
    req.set_spec_yaml(text.str());
    req.set_spec_name(f.file);
  } else if (f.instances == 0) {
    return ctx.Fail(absl::InvalidArgumentError("give a new spec (-f SPEC) or --instances N"));
  }
  req.set_instances(f.instances);
  absl::StatusOr<v1::UpdateOptions> options = OptionsFromFlags(f);
  if (!options.ok()) return ctx.Fail(options.status());
  *req.mutable_options() = *options;
  req.set_paused(f.paused);
  req.set_dry_run(f.dry_run);
  req.set_override(f.override_active);
  req.set_version(f.version);
  if (f.version == 0) {
    v1::GetJobRequest get;
    get.set_job_id(f.job);
    absl::StatusOr<v1::GetJobResponse> job =
        rpc->Call(CallKind::kRead, &v1::JobService::Stub::GetJob, get);
    if (!job.ok()) return ctx.Fail(job.status());
    req.set_version(job->job().version());
  }
  absl::StatusOr<v1::UpdateJobResponse> resp =
      rpc->Call(CallKind::kWrite, &v1::JobService::Stub::UpdateJob, req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (PrintStructured(ctx.client, *resp)) return;
  if (f.dry_run) {
    std::cout << "dry run: job " << f.job << " would go to version " << resp->version() << "\n"
              << "  added:     " << List(resp->added()) << "\n"
              << "  removed:   " << List(resp->removed()) << "\n"
              << "  updated:   " << List(resp->updated()) << "\n"
              << "  unchanged: " << List(resp->unchanged()) << std::endl;
    return;
  }
  std::cout << "job " << f.job << ": update " << resp->update_id() << " to version "
            << resp->version() << " (" << resp->updated_size() << " updated, " << resp->added_size()
            << " added, " << resp->removed_size() << " removed)" << std::endl;
}

// Calls a one-job update RPC (a write) and prints `done` on success.
template <typename Req, typename Resp>
void Simple(CommandContext& ctx,
            grpc::Status (v1::JobService::Stub::*call)(grpc::ClientContext*, const Req&, Resp*),
            const std::string& done) {
  Req req;
  req.set_job_id(Flags().job);
  if (!Run(ctx, CallKind::kWrite, call, req)) return;
  std::cout << "job " << Flags().job << ": " << done << std::endl;
}

void Wait(CommandContext& ctx) {
  const UpdateFlags& f = Flags();
  absl::StatusOr<absl::Duration> timeout = ParseDurationStrict(f.timeout);
  if (!timeout.ok()) return ctx.Fail(WithFlag(timeout.status(), "--timeout"));
  absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
  if (!rpc.ok()) return ctx.Fail(rpc.status());
  absl::Time deadline =
      *timeout == absl::ZeroDuration() ? absl::InfiniteFuture() : absl::Now() + *timeout;
  rpc->set_deadline(deadline);  // each poll is a read, retried until then (see cli/rpc.h)
  std::string last;
  while (true) {
    v1::GetUpdateRequest req;
    req.set_job_id(f.job);
    absl::StatusOr<v1::GetUpdateResponse> resp =
        rpc->Call(CallKind::kRead, &v1::JobService::Stub::GetUpdate, req);
    if (!resp.ok()) return ctx.Fail(resp.status());
    const v1::UpdateInfo& u = resp->update();
    std::string line = UpdateLine(u);
    if (line != last) std::cerr << line << std::endl;
    last = line;
    if (u.state() != v1::Update::ROLLING_FORWARD && u.state() != v1::Update::ROLLING_BACK) {
      PrintStructured(ctx.client, *resp);
      if (u.state() != v1::Update::SUCCEEDED) {
        return ctx.Fail(absl::FailedPreconditionError(absl::StrCat(
            "update ", u.id(), " of job ", f.job, " ended ", v1::Update::State_Name(u.state()))));
      }
      return;
    }
    if (absl::Now() >= deadline) {
      return ctx.Fail(absl::DeadlineExceededError(absl::StrCat("update ", u.id(), " is still ",
                                                               v1::Update::State_Name(u.state()),
                                                               " after ", f.timeout)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace

void AddJobUpdateCommands(CLI::App& job, CommandContext& ctx) {
  UpdateFlags& f = Flags();
  CLI::App* update = job.add_subcommand(
      "update", "replace a job's spec with a new version, rolled out in batches");
  update->add_option("job", f.job, "job id")->required();
  update->add_option("-f,--file", f.file, "the new job spec (YAML)");
  AddFormatOption(*update, f.format);
  update->add_option("--instances", f.instances, "the new number of instances");
  update->add_option("--batch-size", f.batch_size, "instances updated at a time");
  update->add_option("--max-failures", f.max_failures, "failed instances tolerated");
  update->add_flag("--rollback-on-failure", f.rollback_on_failure,
                   "roll back when the update fails");
  update->add_flag("--in-place", f.in_place, "prefer each instance's current host");
  update->add_option("--min-healthy-time", f.min_healthy_time,
                     "how long a new instance must stay healthy, e.g. 10s");
  update->add_flag("--paused", f.paused, "start the update paused");
  update->add_flag("--dry-run", f.dry_run, "print what would change; change nothing");
  update->add_flag("--override", f.override_active, "abort an update in flight first");
  update->add_option("--version", f.version,
                     "the job version this update replaces (default: the current one)");
  update->callback([&ctx] { RunUpdate(ctx); });

  CLI::App* rollback = job.add_subcommand("rollback", "go back to an earlier version");
  rollback->add_option("job", f.job, "job id")->required();
  rollback->add_option("--to", f.to_version, "the version (default: the one before the current)");
  rollback->add_option("--batch-size", f.batch_size, "instances changed at a time");
  rollback->callback([&ctx] {
    v1::RollbackJobRequest req;
    req.set_job_id(Flags().job);
    req.set_to_version(Flags().to_version);
    absl::StatusOr<v1::UpdateOptions> options = OptionsFromFlags(Flags());
    if (!options.ok()) return ctx.Fail(options.status());
    *req.mutable_options() = *options;
    std::optional<v1::RollbackJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::RollbackJob, req);
    if (!resp) return;
    std::cout << "job " << Flags().job << ": update " << resp->update_id()
              << " rolls back as version " << resp->version() << std::endl;
  });
}

void RegisterUpdateCommands(CLI::App& app, CommandContext& ctx) {
  UpdateFlags& f = Flags();
  CLI::App* update = AddGroup(app, "update", "rolling updates of a job");

  CLI::App* get = update->add_subcommand("get", "a job's latest update (or --id N)");
  get->add_option("job", f.job, "job id")->required();
  get->add_option("--id", f.update_id, "update id (default: the latest)");
  get->callback([&ctx] {
    v1::GetUpdateRequest req;
    req.set_job_id(Flags().job);
    req.set_update_id(Flags().update_id);
    std::optional<v1::GetUpdateResponse> resp =
        Run(ctx, CallKind::kRead, &v1::JobService::Stub::GetUpdate, req);
    if (!resp) return;
    PrintUpdates({resp->update()});
    if (resp->update().failed() > 0) {
      std::cout << "failed instances: " << List(resp->update().failed_instances()) << std::endl;
    }
  });

  CLI::App* list = update->add_subcommand("list", "a job's updates, oldest first");
  list->add_option("job", f.job, "job id")->required();
  list->callback([&ctx] {
    v1::ListUpdatesRequest req;
    req.set_job_id(Flags().job);
    std::optional<v1::ListUpdatesResponse> resp =
        Run(ctx, CallKind::kRead, &v1::JobService::Stub::ListUpdates, req);
    if (!resp) return;
    PrintUpdates({resp->updates().begin(), resp->updates().end()});
  });

  CLI::App* pause = update->add_subcommand("pause", "stop starting new instances");
  pause->add_option("job", f.job, "job id")->required();
  pause->callback([&ctx] { Simple(ctx, &v1::JobService::Stub::PauseUpdate, "update paused"); });
  CLI::App* resume = update->add_subcommand("resume", "go on with a paused update");
  resume->add_option("job", f.job, "job id")->required();
  resume->callback([&ctx] { Simple(ctx, &v1::JobService::Stub::ResumeUpdate, "update resumed"); });
  CLI::App* abort = update->add_subcommand("abort", "stop the update where it is");
  abort->add_option("job", f.job, "job id")->required();
  abort->callback([&ctx] { Simple(ctx, &v1::JobService::Stub::AbortUpdate, "update aborted"); });

  CLI::App* wait = update->add_subcommand(
      "wait", "block until the job's update ends; exit 0 only if it succeeded");
  wait->add_option("job", f.job, "job id")->required();
  wait->add_option("--timeout", f.timeout, "give up after this long (0: never)")
      ->capture_default_str();
  wait->callback([&ctx] { Wait(ctx); });
}

}  // namespace paceline::cli
