// `paceline job create|get|list|kill|delete|restart|wait|validate` (and `watch`, in
// watch_command.cc; `endpoints`, in endpoint_commands.cc).

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/archive_commands.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/peloton_commands.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/task_state.h"
#include "common/units.h"
#include "paceline/v1/job.grpc.pb.h"
#include "spec/yaml_spec.h"

namespace paceline::cli {
namespace {

struct JobFlags {
  std::string file;
  std::string format = "paceline";
  std::string pool;
  uint64_t job_id = 0;
  bool archived = false;
  std::vector<std::string> states, types;
  std::vector<std::string> labels;
  std::string owner;
  std::string name;
  uint32_t limit = 100;
  std::string timeout = "0";
  std::string instances;  // "0-9,12"
  std::string since;
  std::string page_token;
};

// Parses "0-9,12" into ranges (inclusive); empty text = no ranges (every instance).
absl::StatusOr<std::vector<std::pair<uint32_t, uint32_t>>> ParseInstanceRanges(
    const std::string& text) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (text.empty()) return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t first = 0, last = 0;
    size_t dash = part.find('-');
    bool ok = dash == absl::string_view::npos
                  ? absl::SimpleAtoi(part, &first) && absl::SimpleAtoi(part, &last)
                  : absl::SimpleAtoi(part.substr(0, dash), &first) &&
                        absl::SimpleAtoi(part.substr(dash + 1), &last);
    if (!ok || first > last) {
      return absl::InvalidArgumentError(
          absl::StrCat("--instances: '", part, "' is not N or FIRST-LAST (e.g. 0-9,12)"));
    }
    out.emplace_back(first, last);
  }
  return out;
}

// "RUNNING 3, SUCCEEDED 997" in the order of the task state machine.
std::string CountsLine(const v1::JobSummary& j) {
  std::vector<std::string> parts;
  for (int i = 0; i < kNumTaskStates; ++i) {
    std::string name(TaskStateName(static_cast<TaskState>(i)));
    auto it = j.task_counts().find(name);
    if (it != j.task_counts().end()) parts.push_back(absl::StrCat(name, " ", it->second));
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<v1::GetJobResponse> GetJob(Rpc& rpc, uint64_t id) {
  v1::GetJobRequest req;
  req.set_job_id(id);
  return rpc.Call(CallKind::kRead, &v1::JobService::Stub::GetJob, req);
}

}  // namespace

void RegisterJobCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* job = AddGroup(app, "job", "submit and manage jobs");
  static JobFlags f;

  CLI::App* create = job->add_subcommand("create", "submit a job from a spec file");
  create->add_option("-f,--file", f.file, "job spec (YAML)")->required();
  create->add_option("--pool", f.pool, "leaf pool to run in, e.g. /batch")->required();
  AddFormatOption(*create, f.format);
  create->callback([&ctx] {
    absl::StatusOr<std::string> yaml = JobSpecYaml(f.file, f.format);
    if (!yaml.ok()) return ctx.Fail(yaml.status());
    v1::CreateJobRequest req;
    req.set_pool(f.pool);
    req.set_spec_yaml(*yaml);
    req.set_spec_name(SpecName(f.file, f.format));
    std::optional<v1::CreateJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::CreateJob, req);
    if (!resp) return;
    std::cout << resp->job_id() << std::endl;
  });

  CLI::App* get = job->add_subcommand("get", "a job: state, task counts, why it waits");
  get->add_option("job", f.job_id, "job id")->required();
  get->add_flag("--archived", f.archived,
                "the job as the archive holds it, once retired after its pool's retention");
  get->callback([&ctx] {
    if (f.archived) return ShowArchivedJob(ctx, f.job_id);
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    absl::StatusOr<v1::GetJobResponse> resp = GetJob(*rpc, f.job_id);
    if (!resp.ok()) return ctx.Fail(resp.status());
    if (PrintStructured(ctx.client, *resp)) return;
    const v1::JobSummary& j = resp->job();
    Table t({"id", "name", "type", "pool", "state", "version", "instances", "tasks", "created"});
    t.AddRow({absl::StrCat(j.id()), j.name(), j.type(), j.pool(), j.state(),
              absl::StrCat(j.version()), absl::StrCat(j.instances()), CountsLine(j),
              FormatUnixMillis(j.created_at_unix_ms())});
    std::cout << t.Render();
    if (resp->has_update()) std::cout << "update: " << UpdateLine(resp->update()) << std::endl;
    if (absl::StatusOr<JobSpec> spec = ParseJobSpec(resp->spec_yaml(), "stored spec");
        spec.ok() && spec->schedule) {
      std::cout << "schedule: " << ScheduleLine(*spec->schedule) << std::endl;
    }
    if (resp->roles_size() > 0) std::cout << "roles: " << RolesLine(*resp) << std::endl;
    if (resp->has_gang()) std::cout << "gang: " << GangLine(resp->gang()) << std::endl;
    if (resp->completion() == "instance-0") {
      std::cout << "completion: instance-0 (the job ends when instance 0 ends)" << std::endl;
    }
    if (j.healthy() + j.unhealthy() + j.health_unknown() > 0) {
      std::cout << "health: " << j.healthy() << " healthy, " << j.unhealthy() << " unhealthy, "
                << j.health_unknown() << " unknown" << std::endl;
    }
    if (!resp->pending_reason().empty()) {
      std::cout << "waiting: " << resp->pending_reason() << std::endl;
    }
  });

  CLI::App* list = job->add_subcommand("list", "jobs, filtered");
  list->add_option("--pool", f.pool, "only jobs of this pool");
  list->add_option("--state", f.states, "only jobs in these states (repeatable)");
  list->add_option("--type", f.types,
                   "only jobs of these types: batch, service, stateful, daemon (repeatable)");
  list->add_option("--label", f.labels, "only jobs with this label KEY=VALUE (repeatable)");
  list->add_option("--owner", f.owner, "only jobs of this owner");
  list->add_option("--name", f.name, "only jobs with this name");
  list->add_option("--limit", f.limit, "at most this many (1..1000)")->capture_default_str();
  list->add_option("--since", f.since, "only jobs created within this long, e.g. 2h");
  list->add_option("--page-token", f.page_token, "continue after a previous page");
  list->callback([&ctx] {
    v1::QueryJobsRequest req;
    req.set_pool(f.pool);
    for (const std::string& s : f.states) req.add_states(s);
    for (const std::string& t : f.types) req.add_types(t);
    for (const std::string& l : f.labels) {
      std::pair<std::string, std::string> kv = absl::StrSplit(l, absl::MaxSplits('=', 1));
      if (kv.first.empty() || l.find('=') == std::string::npos) {
        return ctx.Fail(
            absl::InvalidArgumentError(absl::StrCat("--label: '", l, "' is not KEY=VALUE")));
      }
      (*req.mutable_labels())[kv.first] = kv.second;
    }
    req.set_owner(f.owner);
    req.set_name(f.name);
    req.set_page_size(f.limit);
    req.set_page_token(f.page_token);
    if (!f.since.empty()) {
      absl::StatusOr<absl::Duration> since = ParseDurationStrict(f.since);
      if (!since.ok()) return ctx.Fail(WithFlag(since.status(), "--since"));
      req.set_created_after_unix_ms(absl::ToUnixMillis(absl::Now() - *since));
    }
    std::optional<v1::QueryJobsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::JobService::Stub::QueryJobs, req);
    if (!resp) return;
    Table t({"id", "name", "type", "pool", "state", "instances", "tasks", "created"});
    for (const v1::JobSummary& j : resp->jobs()) {
      t.AddRow({absl::StrCat(j.id()), j.name(), j.type(), j.pool(), j.state(),
                absl::StrCat(j.instances()), CountsLine(j),
                FormatUnixMillis(j.created_at_unix_ms())});
    }
    std::cout << t.Render();
    if (!resp->next_page_token().empty()) {
      std::cerr << "more jobs: --page-token " << resp->next_page_token() << std::endl;
    }
  });

  CLI::App* kill = job->add_subcommand("kill", "kill every task of a job");
  kill->add_option("job", f.job_id, "job id")->required();
  kill->callback([&ctx] {
    v1::KillJobRequest req;
    req.set_job_id(f.job_id);
    std::optional<v1::KillJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::KillJob, req);
    if (!resp) return;
    std::cout << "job " << f.job_id << " is being killed" << std::endl;
  });

  CLI::App* del = job->add_subcommand("delete", "forget a job whose tasks have all ended");
  del->add_option("job", f.job_id, "job id")->required();
  static bool purge_volumes = false;
  del->add_flag("--purge-volumes", purge_volumes,
                "stateful jobs: also remove the volumes on the connected hosts");
  del->callback([&ctx] {
    v1::DeleteJobRequest req;
    req.set_job_id(f.job_id);
    req.set_purge_volumes(purge_volumes);
    std::optional<v1::DeleteJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::DeleteJob, req);
    if (!resp) return;
    std::cout << "job " << f.job_id << " deleted" << std::endl;
  });

  CLI::App* restart = job->add_subcommand(
      "restart", "start a new run of instances (live runs are killed first, with their grace)");
  restart->add_option("job", f.job_id, "job id")->required();
  restart->add_option("--instances", f.instances, "which instances, e.g. 0-9,12 (default: all)");
  restart->callback([&ctx] {
    absl::StatusOr<std::vector<std::pair<uint32_t, uint32_t>>> ranges =
        ParseInstanceRanges(f.instances);
    if (!ranges.ok()) return ctx.Fail(ranges.status());
    v1::RestartJobRequest req;
    req.set_job_id(f.job_id);
    for (const auto& [first, last] : *ranges) {
      v1::InstanceRange* r = req.add_ranges();
      r->set_first(first);
      r->set_last(last);
    }
    std::optional<v1::RestartJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::RestartJob, req);
    if (!resp) return;
    std::cout << "job " << f.job_id << ": " << resp->restarted() << " instances restarting"
              << std::endl;
  });

  CLI::App* wait = job->add_subcommand(
      "wait", "block until the job reaches its goal; exit 0 only if it succeeded");
  wait->add_option("job", f.job_id, "job id")->required();
  wait->add_option("--timeout", f.timeout, "give up after this long, e.g. 10m (0: never)")
      ->capture_default_str();
  wait->callback([&ctx] {
    absl::StatusOr<absl::Duration> timeout = ParseDurationStrict(f.timeout);
    if (!timeout.ok()) return ctx.Fail(WithFlag(timeout.status(), "--timeout"));
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    absl::Time deadline =
        *timeout == absl::ZeroDuration() ? absl::InfiniteFuture() : absl::Now() + *timeout;
    // Each poll is a read: an outage is ridden through until the deadline (none: for the
    // global --timeout), and the next poll picks up where the job is.
    rpc->set_deadline(deadline);
    bool tty = isatty(STDERR_FILENO);
    std::string last_line;
    rpc->set_retry_sink([&](const std::string& note) {
      std::cerr << (tty && !last_line.empty() ? "\r\033[K" : "") << note << std::endl;
      last_line.clear();  // the progress line again after the outage
    });
    while (true) {
      absl::StatusOr<v1::GetJobResponse> resp = GetJob(*rpc, f.job_id);
      if (!resp.ok()) return ctx.Fail(resp.status());
      const v1::JobSummary& j = resp->job();
      std::string line = absl::StrCat("job ", j.id(), " ", j.state(), ": ", CountsLine(j));
      if (line != last_line) {
        std::cerr << (tty ? "\r\033[K" : "") << line << (tty ? "" : "\n") << std::flush;
        last_line = line;
      }
      std::optional<JobState> state = JobStateFromName(j.state());
      if (state && IsTerminal(*state)) {
        if (tty) std::cerr << std::endl;
        PrintStructured(ctx.client, *resp);
        if (*state != JobState::kSucceeded) {
          return ctx.Fail(
              absl::FailedPreconditionError(absl::StrCat("job ", j.id(), " ended ", j.state())));
        }
        return;
      }
      if (absl::Now() >= deadline) {
        if (tty) std::cerr << std::endl;
        return ctx.Fail(absl::DeadlineExceededError(
            absl::StrCat("job ", j.id(), " is still ", j.state(), " after ", f.timeout)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });

  AddJobValidateCommand(*job, ctx);
  AddJobWatchCommand(*job, ctx);
  AddJobEndpointsCommand(*job, ctx);
  AddJobRunsCommand(*job, ctx);
  AddJobUpdateCommands(*job, ctx);
}

}  // namespace paceline::cli
