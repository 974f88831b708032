// TaskServiceImpl::Exec: `paceline task exec`. The first request names the task and the command;
// the caller's permission is checked against the job's pool (whoever may submit there, or a
// task's credential on its own job: access/permissions.cc) and the call is audited with the
// instance as its target. The task must be RUNNING; its host's agent runs the command
// (agent/exec/) and the session is routed by the master's agent registry (masterd/exec_router.h).
//
// Two threads per call: this handler's writes the agent's output to the caller, a reader thread
// passes the caller's input on. Flow control both ways, so that a session holds at most
// kExecWindow bytes in each direction: the agent sends output only within the credit this
// handler returns as it writes to the caller; stdin is read from the caller only while what the
// agent has not written to the command yet fits in the agent's window.

#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_not_found.h"
#include "api/task_service_impl.h"
#include "common/task_state.h"
#include "wire/core.h"

namespace paceline::api {
namespace {

constexpr uint32_t kExecWindow = 256 * 1024;
// How long the agent may take to start the command.
constexpr absl::Duration kStartTimeout = absl::Seconds(15);
// After the exit was sent: how long the caller may take to close its side.
constexpr absl::Duration kCloseTimeout = absl::Seconds(5);

// What the agent sent, waiting for the handler's thread; and the stdin in flight.
struct ExecState {
  absl::Mutex mu;
  std::deque<absl::StatusOr<v1::ExecOutput>> outputs ABSL_GUARDED_BY(mu);
  uint64_t stdin_in_flight ABSL_GUARDED_BY(mu) = 0;  // sent to the agent, not yet credited
  bool ended ABSL_GUARDED_BY(mu) = false;            // the handler is done with the session
  bool reader_done ABSL_GUARDED_BY(mu) = false;
};

// The host and run of `open`'s task, which must be running.
absl::Status FindRunningTask(const scheduler::SchedulerCore& core, const v1::ExecOpen& open,
                             std::string& host, uint32_t& run) {
  const jobmgr::Job* job = core.jobs().GetJob(JobId(open.job_id()));
  if (job == nullptr) return JobNotFound(open.job_id());
  if (open.instance() >= job->instances()) {
    return absl::NotFoundError(absl::StrCat("job ", open.job_id(), " has ", job->instances(),
                                            " instances; no instance ", open.instance()));
  }
  const jobmgr::TaskRuntime& t = job->task(open.instance());
  if (t.state != TaskState::kRunning || t.host == jobmgr::kNoHost) {
    return absl::FailedPreconditionError(absl::StrCat("task ", open.job_id(), "/", open.instance(),
                                                      " is ", TaskStateName(t.state),
                                                      ", not RUNNING: exec needs a running task"));
  }
  host = core.jobs().HostName(t.host);
  run = t.run;
  return absl::OkStatus();
}

}  // namespace

grpc::Status TaskServiceImpl::Exec(
    grpc::ServerContext* ctx, grpc::ServerReaderWriter<v1::ExecResponse, v1::ExecRequest>* stream) {
  v1::ExecRequest first;
  if (!stream->Read(&first) || !first.has_open()) {
    if (grpc::Status a = access_->Check(ctx); !a.ok()) return a;
    return ToGrpcStatus(absl::InvalidArgumentError(
        "open: the first request of an Exec stream must be `open` (job_id, instance, argv)"));
  }
  const v1::ExecOpen& open = first.open();
  access::Target target;
  std::string host;
  uint32_t run = 0;
  absl::Status found;
  cluster_->RunRead([&](const scheduler::SchedulerCore& core) {
    target = JobTargetIn(core, open.job_id());
    found = FindRunningTask(core, open, host, run);
  });
  target.object = absl::StrCat("job ", open.job_id(), " instance ", open.instance(), ": ",
                               absl::StrJoin(open.argv(), " ").substr(0, 200));
  if (grpc::Status a = access_->Check(ctx, target); !a.ok()) return a;
  if (!found.ok()) return ToGrpcStatus(found);
  if (open.argv().empty() || open.argv(0).empty()) {
    return ToGrpcStatus(
        absl::InvalidArgumentError("open.argv: expected the command to run, e.g. [\"sh\"]"));
  }

  auto state = std::make_shared<ExecState>();
  v1::ExecStart start;
  *start.mutable_run() = wire::ToProto(RunId{TaskId{JobId(open.job_id()), open.instance()}, run});
  *start.mutable_argv() = open.argv();
  start.set_tty(open.tty());
  start.set_rows(open.size().rows());
  start.set_cols(open.size().cols());
  start.set_window(kExecWindow);
  absl::StatusOr<std::unique_ptr<ExecChannel>> channel = cluster_->agents().OpenExec(
      host, std::move(start), [state](absl::StatusOr<v1::ExecOutput> out) {
        absl::MutexLock lock(&state->mu);
        if (out.ok() && out->credit() > 0) {
          state->stdin_in_flight -= std::min<uint64_t>(state->stdin_in_flight, out->credit());
        }
        state->outputs.push_back(std::move(out));
      });
  if (!channel.ok()) return ToGrpcStatus(channel.status());

  // The caller's input, passed on within the agent's window.
  std::thread reader([&] {
    v1::ExecRequest req;
    while (stream->Read(&req)) {
      v1::ExecInput in;
      if (req.has_stdin()) {
        const uint64_t n = req.stdin().size();
        absl::MutexLock lock(&state->mu);
        auto room = [&] {
          return state->ended || state->stdin_in_flight == 0 ||
                 state->stdin_in_flight + n <= kExecWindow;
        };
        state->mu.Await(absl::Condition(&room));
        if (state->ended) break;
        state->stdin_in_flight += n;
        in.set_stdin(std::move(*req.mutable_stdin()));
      } else if (req.has_close_stdin()) {
        in.set_close_stdin(req.close_stdin());
      } else if (req.has_resize()) {
        in.set_rows(req.resize().rows());
        in.set_cols(req.resize().cols());
      } else {
        continue;  // a second `open`, or nothing: ignored
      }
      if (!(*channel)->Send(std::move(in))) break;
    }
    absl::MutexLock lock(&state->mu);
    state->reader_done = true;
  });

  // The agent's output, written to the caller; credit returned as it goes.
  grpc::Status status;
  bool started = false;
  const absl::Time start_by = absl::Now() + kStartTimeout;
  for (bool done = false; !done;) {
    std::deque<absl::StatusOr<v1::ExecOutput>> outputs;
    {
      absl::MutexLock lock(&state->mu);
      auto ready = [&] { return !state->outputs.empty(); };
      state->mu.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(200));
      outputs.swap(state->outputs);
    }
    if (ctx->IsCancelled()) {
      status = grpc::Status(grpc::StatusCode::CANCELLED, "the caller left");
      break;
    }
    if (!started && outputs.empty() && absl::Now() > start_by) {
      status = ToGrpcStatus(absl::UnavailableError(
          absl::StrCat("host ", host, " did not start the command in time")));
      break;
    }
    for (absl::StatusOr<v1::ExecOutput>& out : outputs) {
      if (!out.ok()) {
        status = ToGrpcStatus(out.status());
        done = true;
        break;
      }
      if (!out->error().empty()) {
        status = ToGrpcStatus(
            absl::FailedPreconditionError(absl::StrCat("host ", host, ": ", out->error())));
        done = true;
        break;
      }
      v1::ExecResponse resp;
      bool written = true;
      if (out->started()) {
        started = true;
        resp.mutable_started()->set_host(host);
        resp.mutable_started()->set_run(run);
        written = written && stream->Write(resp);
      }
      uint32_t credit = 0;
      if (!out->stdout().empty()) {
        credit += out->stdout().size();
        resp.set_stdout(std::move(*out->mutable_stdout()));
        written = written && stream->Write(resp);
      }
      if (!out->stderr().empty()) {
        credit += out->stderr().size();
        resp.set_stderr(std::move(*out->mutable_stderr()));
        written = written && stream->Write(resp);
      }
      if (credit > 0) {
        v1::ExecInput in;
        in.set_credit(credit);
        (*channel)->Send(std::move(in));
      }
      if (out->exited()) {
        resp.mutable_exit()->set_exit_code(out->exit_code());
        resp.mutable_exit()->set_signal(out->signal());
        written = written && stream->Write(resp);
        done = true;
      }
      if (!written) {
        status = grpc::Status(grpc::StatusCode::CANCELLED, "the caller left");
        done = true;
      }
      if (done) break;
    }
  }
  {
    absl::MutexLock lock(&state->mu);
    state->ended = true;
    // The caller closes its side once it has the exit; one that does not is cut off.
    auto reader_done = [&] { return state->reader_done; };
    if (!state->mu.AwaitWithTimeout(absl::Condition(&reader_done),
                                    status.ok() ? kCloseTimeout : absl::ZeroDuration())) {
      ctx->TryCancel();
    }
  }
  reader.join();
  channel->reset();  // cancels the command unless it ended
  return status;
}

}  // namespace paceline::api
