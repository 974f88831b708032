// `paceline job watch [JOB]`: prints job and task events as they happen (JobService.Watch).
// With a job id it ends when the job reaches a final state or is deleted; without one it runs
// until interrupted. `-o json` prints one JSON object per line.
//
// It rides through a restart or a failover of the master: the stream is a read (cli/rpc.h), so
// a broken one is opened again, for at most --timeout per outage. The API has no resume cursor,
// but its first event, `started`, promises that nothing committed after it is missed
// (docs/api.md). So a watch of one job reads the job's tasks once it started, and after a
// reconnect reads them again and prints, for each instance whose run or state differs from what
// it last knew, one line made from the task list; the job's state, which the master sends after
// `started`, is printed only when it differs from the last one printed. A watch of every job
// says on stderr that the events of the outage are not shown.

#include <google/protobuf/util/json_util.h>

#include <iostream>
#include <map>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
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

// A job change without its time: two equal keys print the same line.
std::string KeyOf(const v1::JobChange& j) {
  std::vector<std::string> counts;
  for (const auto& [state, n] : j.task_counts()) counts.push_back(absl::StrCat(state, "=", n));
  std::sort(counts.begin(), counts.end());
  return absl::StrCat(j.state(), " v", j.version(), " ", absl::StrJoin(counts, " "));
}

// The event a task list entry stands for: its current run and state.
v1::WatchEvent EventOf(uint64_t job, const v1::TaskInfo& t) {
  v1::WatchEvent e;
  int64_t at = t.finished_at_unix_ms() != 0  ? t.finished_at_unix_ms()
               : t.started_at_unix_ms() != 0 ? t.started_at_unix_ms()
                                             : absl::ToUnixMillis(absl::Now());
  e.set_job_id(job);
  e.set_at_unix_ms(at);
  e.mutable_task()->set_instance(t.instance());
  v1::TaskEvent* te = e.mutable_task()->mutable_event();
  te->set_run(t.run());
  te->set_at_unix_ms(at);
  te->set_state(t.state());
  te->set_host(t.host());
  te->set_reason(t.reason().empty() ? t.pending_reason() : t.reason());
  return e;
}

class Watcher {
 public:
  Watcher(CommandContext& ctx, Rpc& rpc, uint64_t job) : ctx_(ctx), rpc_(rpc), job_(job) {}

  absl::Status Run() {
    rpc_.set_deadline(absl::InfiniteFuture());
    return rpc_.Invoke(
        CallKind::kRead, [this](Rpc::Attempt& a) { return Session(a); }, /*stream=*/true);
  }

 private:
  using RunState = std::pair<uint32_t, int>;  // run, task state

  // One stream, read to its end; OK when the watch is over.
  grpc::Status Session(Rpc::Attempt& a) {
    v1::WatchRequest req;
    req.set_job_id(job_);
    auto reader = v1::JobService::NewStub(a.channel)->Watch(a.context, req);
    v1::WatchEvent e;
    while (reader->Read(&e)) {
      if (e.kind_case() == v1::WatchEvent::KIND_NOT_SET) continue;  // a heartbeat
      if (e.has_started()) {
        a.answered = true;
        Started(a, e);
        continue;
      }
      if (e.has_job()) {
        std::string key = KeyOf(e.job());
        if (key == last_job_) continue;  // the state the master repeats after a reconnect
        last_job_ = key;
      }
      if (e.has_task() && Echo(e.task())) continue;
      Print(e);
      if (Ends(e, job_)) {
        a.context->TryCancel();
        return grpc::Status::OK;
      }
    }
    grpc::Status s = reader->Finish();
    lost_at_ = absl::Now();
    if (s.error_code() == grpc::StatusCode::NOT_FOUND && sessions_ > 0) {
      // The job ended and was deleted while the master was out of reach.
      v1::WatchEvent gone;
      gone.set_job_id(job_);
      gone.set_at_unix_ms(absl::ToUnixMillis(lost_at_));
      gone.mutable_job()->set_state("DELETED");
      Print(gone);
      return grpc::Status::OK;
    }
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      // Fell behind: read the state again and watch again, as after an outage.
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fell behind: " + s.error_message());
    }
    if (s.ok()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the master ended the watch");
    return s;
  }

  void Started(Rpc::Attempt& a, const v1::WatchEvent& e) {
    if (sessions_++ == 0) {
      Print(e);
      if (job_ != 0) CatchUp(a, /*print=*/false);
      return;
    }
    if (job_ != 0) {
      CatchUp(a, /*print=*/true);
    } else {
      std::cerr << "paceline: watching again at " << rpc_.address() << "; the events since "
                << absl::FormatTime("%H:%M:%S", lost_at_, absl::UTCTimeZone())
                << " UTC are not shown" << std::endl;
    }
  }

  // Reads the job's tasks; prints (`print`) each whose run or state is not the one known.
  void CatchUp(Rpc::Attempt& a, bool print) {
    v1::ListTasksRequest req;
    req.set_job_id(job_);
    v1::ListTasksResponse resp;
    std::unique_ptr<grpc::ClientContext> call = rpc_.Context(absl::Now() + absl::Seconds(30));
    grpc::Status s = v1::TaskService::NewStub(a.channel)->ListTasks(call.get(), req, &resp);
    if (!s.ok()) {
      std::cerr << "paceline: could not read the tasks of job " << job_ << " (" << s.error_message()
                << "); changes of tasks while the master was out of reach may be missing"
                << std::endl;
      return;
    }
    for (const v1::TaskInfo& t : resp.tasks()) {
      RunState now{t.run(), t.state()};
      auto it = seen_.find(t.instance());
      if (it != seen_.end() && it->second == now) continue;
      seen_[t.instance()] = now;
      if (!print) continue;
      echo_[t.instance()] = now;
      Print(EventOf(job_, t));
    }
  }

  // Whether `t` is the event of a change a catch-up line already printed; records it if not.
  bool Echo(const v1::InstanceEvent& t) {
    RunState now{t.event().run(), t.event().state()};
    auto it = echo_.find(t.instance());
    bool echo = it != echo_.end() && it->second == now;
    if (it != echo_.end()) echo_.erase(it);
    if (!echo) seen_[t.instance()] = now;
    return echo;
  }

  void Print(const v1::WatchEvent& e) {
    if (ctx_.client.format() == OutputFormat::kJson) {
      google::protobuf::util::JsonPrintOptions json;
      json.preserve_proto_field_names = true;
      json.always_print_primitive_fields = true;
      std::string line;
      (void)google::protobuf::util::MessageToJsonString(e, &line, json);
      std::cout << line << std::endl;
    } else if (ctx_.client.format() == OutputFormat::kYaml) {
      std::cout << "---\n";
      PrintProtoYaml(e);
    } else {
      std::cout << LineOf(e) << std::endl;
    }
  }

  CommandContext& ctx_;
  Rpc& rpc_;
  const uint64_t job_;
  int sessions_ = 0;                   // streams that reached `started`
  std::string last_job_;               // KeyOf the last job change printed
  std::map<uint32_t, RunState> seen_;  // instance -> its run and state as last known
  std::map<uint32_t, RunState> echo_;  // instance -> a change printed by a catch-up
  absl::Time lost_at_ = absl::Now();   // when the last stream broke
};

}  // namespace

void AddJobWatchCommand(CLI::App& job, CommandContext& ctx) {
  static uint64_t job_id = 0;
  CLI::App* watch = job.add_subcommand(
      "watch", "print job and task events as they happen (one job, or every job)");
  watch->add_option("job", job_id, "job id; ends when the job ends (default: every job, forever)");
  watch->callback([&ctx] {
    absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
    if (!rpc.ok()) return ctx.Fail(rpc.status());
    Watcher watcher(ctx, *rpc, job_id);
    absl::Status s = watcher.Run();
    if (!s.ok()) ctx.Fail(s);
  });
}

}  // namespace paceline::cli
