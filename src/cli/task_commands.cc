// `paceline task list|get|events` and `paceline host list`.

#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/context.h"
#include "cli/format.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/ids.h"
#include "paceline/v1/host.grpc.pb.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

struct TaskFlags {
  uint64_t job_id = 0;
  std::string task;  // JOB/INSTANCE
  std::vector<std::string> states;
  uint32_t limit = 0;
  bool follow = false;
  bool stderr_stream = false;
  int64_t tail = 0;
  uint32_t run = 0;
};

absl::StatusOr<TaskId> ParseTaskArg(const std::string& text) {
  std::optional<TaskId> id = TaskId::Parse(text);
  if (!id) {
    return absl::InvalidArgumentError(
        absl::StrCat("task: '", text, "' is not JOB/INSTANCE, e.g. 42/0"));
  }
  return *id;
}

// What a task or host uses, or "-" without a recent measurement.
std::string UsedText(const v1::Resources& used, int64_t at_unix_ms) {
  return at_unix_ms == 0 ? "-" : FormatResources(used);
}

// A host's allocation, with the revocable part when there is one.
std::string AllocatedText(const v1::HostInfo& h) {
  std::string text = FormatResources(h.allocated());
  if (h.revocable_allocated().cpu_milli() > 0 || h.revocable_allocated().memory_bytes() > 0) {
    absl::StrAppend(&text, " (revocable ", FormatResources(h.revocable_allocated()), ")");
  }
  return text;
}

std::string ExitText(const v1::TaskInfo& t) {
  if (t.signal() != 0) return absl::StrCat("signal ", t.signal());
  if (t.exit_code() >= 0) return absl::StrCat(t.exit_code());
  return "-";
}

}  // namespace

void RegisterTaskCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* task = app.add_subcommand("task", "inspect tasks (job instances)");
  task->require_subcommand(1);
  static TaskFlags f;

  CLI::App* list = task->add_subcommand("list", "the tasks of a job");
  list->add_option("job", f.job_id, "job id")->required();
  list->add_option("--state", f.states, "only tasks in these states (repeatable)");
  list->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::ListTasksRequest req;
    req.set_job_id(f.job_id);
    for (const std::string& s : f.states) req.add_states(s);
    v1::ListTasksResponse resp;
    grpc::Status s =
        v1::TaskService::NewStub(rpc->channel())->ListTasks(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    if (ctx.client.format() == OutputFormat::kJson) return PrintProtoJson(resp);
    Table t({"task", "run", "state", "health", "host", "started", "finished", "exit", "used",
             "reason"});
    for (const v1::TaskInfo& ti : resp.tasks()) {
      t.AddRow({absl::StrCat(ti.job_id(), "/", ti.instance()), absl::StrCat(ti.run()), ti.state(),
                ti.health().empty() ? "-" : ti.health(), ti.host().empty() ? "-" : ti.host(),
                FormatUnixMillis(ti.started_at_unix_ms()),
                FormatUnixMillis(ti.finished_at_unix_ms()), ExitText(ti),
                UsedText(ti.used(), ti.usage_at_unix_ms()),
                ti.pending_reason().empty() ? ti.reason() : ti.pending_reason()});
    }
    std::cout << t.Render();
  });

  CLI::App* get = task->add_subcommand("get", "one task: its current run and every run before");
  get->add_option("task", f.task, "JOB/INSTANCE")->required();
  get->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::GetTaskRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    v1::GetTaskResponse resp;
    grpc::Status s =
        v1::TaskService::NewStub(rpc->channel())->GetTask(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    if (ctx.client.format() == OutputFormat::kJson) return PrintProtoJson(resp);
    const v1::TaskInfo& ti = resp.task();
    std::cout << "task " << ti.job_id() << "/" << ti.instance() << ": " << ti.state() << ", run "
              << ti.run() << (ti.host().empty() ? "" : " on " + ti.host()) << ", asks "
              << FormatResources(ti.resources()) << "\n";
    if (!ti.health().empty()) std::cout << "health: " << ti.health() << "\n";
    if (ti.usage_at_unix_ms() != 0) {
      std::cout << "uses: " << FormatResources(ti.used()) << " (at "
                << FormatUnixMillis(ti.usage_at_unix_ms()) << ")\n";
    }
    if (!ti.pending_reason().empty()) std::cout << "waiting: " << ti.pending_reason() << "\n";
    Table t({"run", "host", "started", "finished", "result", "reason", "message"});
    for (const v1::TaskRun& r : resp.runs()) {
      t.AddRow({absl::StrCat(r.run()), r.host().empty() ? "-" : r.host(),
                FormatUnixMillis(r.started_at_unix_ms()), FormatUnixMillis(r.finished_at_unix_ms()),
                r.final_state().empty() ? "live" : r.final_state(), r.reason(), r.message()});
    }
    std::cout << t.Render();
  });

  CLI::App* events = task->add_subcommand("events", "every state change of a task, with reasons");
  events->add_option("task", f.task, "JOB/INSTANCE")->required();
  events->add_option("--limit", f.limit, "only the newest N events");
  events->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::ListTaskEventsRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    req.set_limit(f.limit);
    v1::ListTaskEventsResponse resp;
    grpc::Status s =
        v1::TaskService::NewStub(rpc->channel())->ListTaskEvents(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    if (ctx.client.format() == OutputFormat::kJson) return PrintProtoJson(resp);
    Table t({"time", "run", "state", "host", "reason", "message"});
    for (const v1::TaskEvent& e : resp.events()) {
      t.AddRow({FormatUnixMillis(e.at_unix_ms()), absl::StrCat(e.run()), e.state(),
                e.host().empty() ? "-" : e.host(), e.reason(), e.message()});
    }
    std::cout << t.Render();
  });

  CLI::App* kill = task->add_subcommand("kill", "kill one instance (it stays KILLED)");
  kill->add_option("task", f.task, "JOB/INSTANCE")->required();
  kill->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::KillTaskRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    v1::KillTaskResponse resp;
    grpc::Status s =
        v1::TaskService::NewStub(rpc->channel())->KillTask(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    std::cout << "task " << f.task << " is being killed" << std::endl;
  });

  CLI::App* release = task->add_subcommand(
      "release-volume", "let a stateful instance whose host is gone start elsewhere, empty");
  release->add_option("task", f.task, "JOB/INSTANCE")->required();
  release->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::ReleaseVolumeRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    v1::ReleaseVolumeResponse resp;
    grpc::Status s =
        v1::TaskService::NewStub(rpc->channel())->ReleaseVolume(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    std::cout << "task " << f.task << ": volume released; it may start on another host"
              << std::endl;
  });

  CLI::App* restart = task->add_subcommand("restart", "start a new run of one instance");
  restart->add_option("task", f.task, "JOB/INSTANCE")->required();
  restart->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::RestartJobRequest req;
    req.set_job_id(id->job.value());
    v1::InstanceRange* r = req.add_ranges();
    r->set_first(id->instance);
    r->set_last(id->instance);
    v1::RestartJobResponse resp;
    grpc::Status s =
        v1::JobService::NewStub(rpc->channel())->RestartJob(rpc->Context().get(), req, &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    std::cout << "task " << f.task << " is restarting" << std::endl;
  });

  CLI::App* logs = task->add_subcommand("logs", "a run's stdout (or stderr), from its host");
  logs->add_option("task", f.task, "JOB/INSTANCE")->required();
  logs->add_flag("-f,--follow", f.follow, "keep printing until the run ends");
  logs->add_flag("--stderr", f.stderr_stream, "stderr instead of stdout");
  logs->add_option("--tail", f.tail, "only the last N lines");
  logs->add_option("--run", f.run, "an earlier run (default: the current one)");
  logs->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    auto stub = v1::TaskService::NewStub(rpc->channel());
    v1::GetTaskLogsRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    req.set_run(f.run);
    req.set_stderr(f.stderr_stream);
    req.set_tail_lines(f.tail);
    while (true) {
      v1::GetTaskLogsResponse resp;
      grpc::Status s = stub->GetTaskLogs(rpc->Context().get(), req, &resp);
      if (!s.ok()) return ctx.Fail(rpc->Explain(s));
      std::cout << resp.data() << std::flush;
      req.set_run(resp.run());  // stay on the run we started with
      req.set_tail_lines(0);
      bool more = resp.next_offset() > req.offset() && !resp.data().empty();
      req.set_offset(resp.next_offset());
      if (more) continue;  // the rest of a long log
      if (!f.follow || resp.finished()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
}

void RegisterHostCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* host = app.add_subcommand("host", "inspect hosts; drain, down and up for maintenance");
  host->require_subcommand(1);
  CLI::App* list = host->add_subcommand("list", "hosts: state, capacity, allocation, labels");
  list->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    v1::ListHostsResponse resp;
    grpc::Status s = v1::HostService::NewStub(rpc->channel())
                         ->ListHosts(rpc->Context().get(), v1::ListHostsRequest(), &resp);
    if (!s.ok()) return ctx.Fail(rpc->Explain(s));
    if (ctx.client.format() == OutputFormat::kJson) return PrintProtoJson(resp);
    Table t(
        {"host", "state", "tasks", "capacity", "allocated", "used", "labels", "isolation", "seen"});
    for (const v1::HostInfo& h : resp.hosts()) {
      std::vector<std::string> labels;
      for (const auto& [k, v] : h.labels()) labels.push_back(absl::StrCat(k, "=", v));
      std::sort(labels.begin(), labels.end());
      std::string state = h.state();
      if (h.state() == "LOST" && !h.maintenance().empty() && h.maintenance() != "UP") {
        absl::StrAppend(&state, " (", h.maintenance(), ")");
      }
      t.AddRow({h.name(), state, absl::StrCat(h.tasks()), FormatResources(h.capacity()),
                AllocatedText(h), UsedText(h.used(), h.usage_at_unix_ms()),
                absl::StrJoin(labels, ","), h.isolation().empty() ? "-" : h.isolation(),
                FormatUnixMillis(h.last_seen_unix_ms())});
    }
    std::cout << t.Render();
  });

  static std::string name;
  struct Verb {
    const char* verb;
    const char* help;
    grpc::Status (v1::HostService::Stub::*call)(grpc::ClientContext*,
                                                const v1::HostMaintenanceRequest&,
                                                v1::HostMaintenanceResponse*);
  };
  for (const Verb& v :
       {Verb{"drain", "stop placing on a host and move its tasks off",
             &v1::HostService::Stub::DrainHost},
        Verb{"down", "mark a drained host DOWN for maintenance", &v1::HostService::Stub::DownHost},
        Verb{"up", "make a host schedulable again", &v1::HostService::Stub::UpHost}}) {
    CLI::App* cmd = host->add_subcommand(v.verb, v.help);
    cmd->add_option("host", name, "host name (see host list)")->required();
    cmd->callback([&ctx, call = v.call] {
      absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
      if (!rpc.ok()) return ctx.Fail(rpc.status());
      v1::HostMaintenanceRequest req;
      req.set_host(name);
      v1::HostMaintenanceResponse resp;
      auto stub = v1::HostService::NewStub(rpc->channel());
      grpc::Status s = (stub.get()->*call)(rpc->Context().get(), req, &resp);
      if (!s.ok()) return ctx.Fail(rpc->Explain(s));
      std::cout << "host " << name << ": " << resp.maintenance() << std::endl;
    });
  }
}

}  // namespace paceline::cli
