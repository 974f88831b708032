// `paceline task list|get|events` and `paceline host list`.

#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/context.h"
#include "cli/exec_command.h"
#include "cli/format.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "common/ids.h"
#include "common/units.h"
#include "paceline/v1/access.grpc.pb.h"
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

// The request for the one task named by a JOB/INSTANCE argument; a bad argument fails the command.
template <typename Req>
std::optional<Req> TaskRequest(CommandContext& ctx, const std::string& arg) {
  absl::StatusOr<TaskId> id = ParseTaskArg(arg);
  if (!id.ok()) {
    ctx.Fail(id.status());
    return std::nullopt;
  }
  Req req;
  req.set_job_id(id->job.value());
  req.set_instance(id->instance);
  return req;
}

// `paceline task VERB JOB/INSTANCE`: one write about one instance, answered with one line.
template <typename Req, typename Resp>
void AddTaskVerb(CLI::App& task, CommandContext& ctx, const char* verb, const char* help,
                 grpc::Status (v1::TaskService::Stub::*method)(grpc::ClientContext*, const Req&,
                                                               Resp*),
                 const char* done) {
  static std::string arg;  // one command runs per process
  CLI::App* cmd = task.add_subcommand(verb, help);
  cmd->add_option("task", arg, "JOB/INSTANCE")->required();
  cmd->callback([&ctx, method, done] {
    std::optional<Req> req = TaskRequest<Req>(ctx, arg);
    if (req && Run(ctx, CallKind::kWrite, method, *req))
      std::cout << "task " << arg << ": " << done << std::endl;
  });
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

// Each GPU device as MODEL:ALLOCATED (in GPUs), e.g. "A100:0.5 A100:1", with "(unhealthy)"
// after a device its agent found unhealthy; "-" without GPUs.
std::string GpuText(const v1::HostInfo& h) {
  if (h.gpus().empty()) return "-";
  std::vector<std::string> devices;
  for (const v1::GpuDevice& d : h.gpus()) {
    devices.push_back(absl::StrCat(d.model(), ":", d.milli_allocated() / 1000.0,
                                   d.has_fault() ? "(unhealthy)" : ""));
  }
  return absl::StrJoin(devices, " ");
}

// One line per unhealthy GPU device of the hosts, saying why; "" when none is.
std::string GpuFaultsText(const v1::ListHostsResponse& hosts) {
  std::string out;
  for (const v1::HostInfo& h : hosts.hosts()) {
    for (const v1::GpuDevice& d : h.gpus()) {
      if (!d.has_fault()) continue;
      absl::StrAppend(&out, "host ", h.name(), ": GPU ", d.index(), " (", d.model(),
                      ") unhealthy since ", FormatUnixMillis(d.fault().since_unix_ms()), ": ",
                      d.fault().reason(), "\n");
    }
  }
  return out;
}

std::string ExitText(const v1::TaskInfo& t) {
  if (t.signal() != 0) return absl::StrCat("signal ", t.signal());
  if (t.exit_code() >= 0) return absl::StrCat(t.exit_code());
  return "-";
}

}  // namespace

void RegisterTaskCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* task = AddGroup(app, "task", "inspect tasks (job instances)");
  static TaskFlags f;

  CLI::App* list = task->add_subcommand("list", "the tasks of a job");
  list->add_option("job", f.job_id, "job id")->required();
  list->add_option("--state", f.states, "only tasks in these states (repeatable)");
  list->callback([&ctx] {
    v1::ListTasksRequest req;
    req.set_job_id(f.job_id);
    for (const std::string& s : f.states) {
      v1::Task::State state;
      if (!v1::Task::State_Parse(absl::AsciiStrToUpper(s), &state) ||
          state == v1::Task::STATE_UNSPECIFIED) {
        return ctx.Fail(absl::InvalidArgumentError(absl::StrCat(
            "--state: unknown task state '", s, "'; expected e.g. PENDING, RUNNING, SUCCEEDED")));
      }
      req.add_states(state);
    }
    std::optional<v1::ListTasksResponse> resp =
        Run(ctx, CallKind::kRead, &v1::TaskService::Stub::ListTasks, req);
    if (!resp) return;
    // ROLE when the job has roles; ATTEMPT (the run's gang attempt) once its gang restarted;
    // READY (the run's readiness) when a task has a readiness check.
    bool roles = false, attempts = false, readiness = false;
    for (const v1::TaskInfo& ti : resp->tasks()) {
      roles = roles || !ti.role().empty();
      attempts = attempts || ti.gang_attempt() > 0;
      readiness = readiness || !ti.readiness().empty();
    }
    std::vector<std::string> headers = {"task"};
    if (roles) headers.push_back("role");
    headers.push_back("run");
    if (attempts) headers.push_back("attempt");
    headers.insert(headers.end(), {"state", "health"});
    if (readiness) headers.push_back("ready");
    for (const char* h : {"host", "started", "finished", "exit", "used", "reason"}) {
      headers.push_back(h);
    }
    Table t(std::move(headers));
    for (const v1::TaskInfo& ti : resp->tasks()) {
      std::vector<std::string> row = {absl::StrCat(ti.job_id(), "/", ti.instance())};
      if (roles) row.push_back(ti.role().empty() ? "-" : ti.role());
      row.push_back(absl::StrCat(ti.run()));
      if (attempts) row.push_back(absl::StrCat(ti.gang_attempt()));
      row.push_back(v1::Task::State_Name(ti.state()));
      row.push_back(ti.health().empty() ? "-" : ti.health());
      if (readiness) row.push_back(ti.readiness().empty() ? "-" : ti.readiness());
      for (std::string cell :
           {ti.host().empty() ? "-" : ti.host(), FormatUnixMillis(ti.started_at_unix_ms()),
            FormatUnixMillis(ti.finished_at_unix_ms()), ExitText(ti),
            UsedText(ti.used(), ti.usage_at_unix_ms()),
            ti.pending_reason().empty() ? ti.reason() : ti.pending_reason()}) {
        row.push_back(std::move(cell));
      }
      t.AddRow(std::move(row));
    }
    std::cout << t.Render();
  });

  CLI::App* get = task->add_subcommand("get", "one task: its current run and every run before");
  get->add_option("task", f.task, "JOB/INSTANCE")->required();
  get->callback([&ctx] {
    std::optional<v1::GetTaskRequest> req = TaskRequest<v1::GetTaskRequest>(ctx, f.task);
    if (!req) return;
    std::optional<v1::GetTaskResponse> resp =
        Run(ctx, CallKind::kRead, &v1::TaskService::Stub::GetTask, *req);
    if (!resp) return;
    const v1::TaskInfo& ti = resp->task();
    std::cout << "task " << ti.job_id() << "/" << ti.instance() << ": "
              << v1::Task::State_Name(ti.state()) << ", run " << ti.run()
              << (ti.host().empty() ? "" : " on " + ti.host()) << ", asks "
              << FormatResources(ti.resources()) << "\n";
    if (!ti.role().empty()) std::cout << "role: " << ti.role() << "\n";
    if (ti.gang_attempt() > 0) {
      std::cout << "gang attempt: " << ti.gang_attempt() << " (its gang restarted together)\n";
    }
    if (!ti.health().empty()) std::cout << "health: " << ti.health() << "\n";
    if (!ti.readiness().empty()) std::cout << "readiness: " << ti.readiness() << "\n";
    if (ti.usage_at_unix_ms() != 0) {
      std::cout << "uses: " << FormatResources(ti.used()) << " (at "
                << FormatUnixMillis(ti.usage_at_unix_ms()) << ")\n";
    }
    if (!ti.pending_reason().empty()) std::cout << "waiting: " << ti.pending_reason() << "\n";
    Table t({"run", "host", "started", "finished", "result", "reason", "message"});
    for (const v1::TaskRun& r : resp->runs()) {
      t.AddRow({absl::StrCat(r.run()), r.host().empty() ? "-" : r.host(),
                FormatUnixMillis(r.started_at_unix_ms()), FormatUnixMillis(r.finished_at_unix_ms()),
                r.final_state() == v1::Task::STATE_UNSPECIFIED
                    ? "live"
                    : v1::Task::State_Name(r.final_state()),
                r.reason(), r.message()});
    }
    std::cout << t.Render();
  });

  CLI::App* events = task->add_subcommand("events", "every state change of a task, with reasons");
  events->add_option("task", f.task, "JOB/INSTANCE")->required();
  events->add_option("--limit", f.limit, "only the newest N events");
  events->callback([&ctx] {
    std::optional<v1::ListTaskEventsRequest> req =
        TaskRequest<v1::ListTaskEventsRequest>(ctx, f.task);
    if (!req) return;
    req->set_limit(f.limit);
    std::optional<v1::ListTaskEventsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::TaskService::Stub::ListTaskEvents, *req);
    if (!resp) return;
    Table t({"time", "run", "state", "host", "reason", "message"});
    for (const v1::TaskEvent& e : resp->events()) {
      t.AddRow({FormatUnixMillis(e.at_unix_ms()), absl::StrCat(e.run()),
                v1::Task::State_Name(e.state()), e.host().empty() ? "-" : e.host(), e.reason(),
                e.message()});
    }
    std::cout << t.Render();
  });

  AddTaskVerb(*task, ctx, "kill", "kill one instance (it stays KILLED)",
              &v1::TaskService::Stub::KillTask, "is being killed");
  AddTaskVerb(*task, ctx, "release-volume",
              "let a stateful instance whose host is gone start elsewhere, empty",
              &v1::TaskService::Stub::ReleaseVolume,
              "volume released; it may start on another host");

  CLI::App* restart = task->add_subcommand("restart", "start a new run of one instance");
  restart->add_option("task", f.task, "JOB/INSTANCE")->required();
  restart->callback([&ctx] {
    absl::StatusOr<TaskId> id = ParseTaskArg(f.task);
    if (!id.ok()) return ctx.Fail(id.status());
    v1::RestartJobRequest req;
    req.set_job_id(id->job.value());
    v1::InstanceRange* r = req.add_ranges();
    r->set_first(id->instance);
    r->set_last(id->instance);
    std::optional<v1::RestartJobResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::JobService::Stub::RestartJob, req);
    if (!resp) return;
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
    // Each read is retried on its own: an outage may last --timeout, and the next read goes on
    // from the offset already printed.
    rpc->set_deadline(absl::InfiniteFuture());
    v1::GetTaskLogsRequest req;
    req.set_job_id(id->job.value());
    req.set_instance(id->instance);
    req.set_run(f.run);
    req.set_stderr(f.stderr_stream);
    req.set_tail_lines(f.tail);
    while (true) {
      absl::StatusOr<v1::GetTaskLogsResponse> resp =
          rpc->Call(CallKind::kRead, &v1::TaskService::Stub::GetTaskLogs, req);
      if (!resp.ok()) return ctx.Fail(resp.status());
      std::cout << resp->data() << std::flush;
      req.set_run(resp->run());  // stay on the run we started with
      req.set_tail_lines(0);
      bool more = resp->next_offset() > req.offset() && !resp->data().empty();
      req.set_offset(resp->next_offset());
      if (more) continue;  // the rest of a long log
      if (!f.follow || resp->finished()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });

  AddTaskExecCommand(*task, ctx);
}

void RegisterHostCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* host = app.add_subcommand("host", "inspect hosts; drain, down and up for maintenance");
  host->require_subcommand(1);
  CLI::App* list =
      host->add_subcommand("list", "hosts: address, state, capacity, allocation, labels");
  static v1::ListHostsRequest list_req;
  list->add_option_function<std::string>(
      "--name", [](const std::string& s) { list_req.set_name_contains(s); },
      "only hosts whose name contains this");
  list->add_option_function<std::string>(
      "--state", [](const std::string& s) { list_req.set_state(s); },
      "only hosts in this state: UP, DRAINING, DRAINED, DOWN, LOST, RECONNECTING");
  list->callback([&ctx] {
    std::optional<v1::ListHostsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::HostService::Stub::ListHosts, list_req);
    if (!resp) return;
    Table t({"host", "address", "state", "tasks", "capacity", "allocated", "used", "gpus", "labels",
             "isolation", "seen"});
    for (const v1::HostInfo& h : resp->hosts()) {
      std::vector<std::string> labels;
      for (const auto& [k, v] : h.labels()) labels.push_back(absl::StrCat(k, "=", v));
      std::sort(labels.begin(), labels.end());
      std::string state = h.state();
      if (h.state() == "LOST" && !h.maintenance().empty() && h.maintenance() != "UP") {
        absl::StrAppend(&state, " (", h.maintenance(), ")");
      }
      t.AddRow({h.name(), h.address().empty() ? "-" : h.address(), state, absl::StrCat(h.tasks()),
                FormatResources(h.capacity()), AllocatedText(h),
                UsedText(h.used(), h.usage_at_unix_ms()), GpuText(h), absl::StrJoin(labels, ","),
                h.isolation().empty() ? "-" : h.isolation(),
                FormatUnixMillis(h.last_seen_unix_ms())});
    }
    std::cout << t.Render() << GpuFaultsText(*resp);
  });

  // host images HOST: its image cache, as its agent last reported it.
  CLI::App* images = host->add_subcommand("images", "a host's image cache (for containers)");
  static std::string images_host;
  images->add_option("host", images_host, "host name (see host list)")->required();
  images->callback([&ctx] {
    v1::ListHostsRequest req;
    req.set_name_contains(images_host);
    std::optional<v1::ListHostsResponse> resp =
        Run(ctx, CallKind::kRead, &v1::HostService::Stub::ListHosts, req);
    if (!resp) return;
    for (const v1::HostInfo& h : resp->hosts()) {
      if (h.name() != images_host) continue;
      Table t({"image", "references", "size", "tasks", "last used"});
      for (const v1::HostImage& img : h.images()) {
        t.AddRow({img.config_digest().substr(0, 19), absl::StrJoin(img.refs(), ","),
                  FormatBytesApprox(img.size_bytes()), absl::StrCat(img.tasks()),
                  FormatUnixMillis(img.last_used_unix_ms())});
      }
      std::cout << t.Render();
      return;
    }
    ctx.Fail(absl::NotFoundError(absl::StrCat("host ", images_host, " not found")));
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
      v1::HostMaintenanceRequest req;
      req.set_host(name);
      std::optional<v1::HostMaintenanceResponse> resp = Run(ctx, CallKind::kWrite, call, req);
      if (!resp) return;
      std::cout << "host " << name << ": " << resp->maintenance() << std::endl;
    });
  }
  CLI::App* revoke = host->add_subcommand(
      "revoke-cert",
      "revoke the certificates a host was issued when it joined: its agent is cut off at once "
      "and refused from then on (admin only)");
  revoke->add_option("host", name, "host name (see host list)")->required();
  revoke->callback([&ctx] {
    v1::RevokeHostCertificateRequest req;
    req.set_host(name);
    std::optional<v1::RevokeHostCertificateResponse> resp =
        Run(ctx, CallKind::kWrite, &v1::AccessService::Stub::RevokeHostCertificate, req);
    if (!resp) return;
    std::cout << "host " << name << ": certificates revoked (serials "
              << absl::StrJoin(resp->serials(), ", ")
              << "); its tasks follow the host-lost rules; `paceline agent join` it again to "
                 "bring it back"
              << std::endl;
  });
}

}  // namespace paceline::cli
