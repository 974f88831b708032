#include "master/agent_connection.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/task_state.h"
#include "master/proto_convert.h"

namespace paceline::master {
namespace {

using scheduler::SchedulerCore;

absl::StatusOr<TaskState> ParseReportedState(const std::string& s) {
  std::optional<TaskState> st = TaskStateFromName(s);
  if (!st || (*st != TaskState::kRunning && !IsTerminal(*st))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "status.state: '", s, "'; expected RUNNING, SUCCEEDED, FAILED, KILLED or LOST"));
  }
  return *st;
}

scheduler::HostRegistration RegistrationOf(const v1::AgentRegister& r) {
  scheduler::HostRegistration reg;
  reg.name = r.host();
  reg.capacity = FromProto(r.capacity());
  reg.gpu_models.assign(r.gpu_models().begin(), r.gpu_models().end());
  for (const auto& [k, v] : r.labels()) reg.labels.emplace_back(k, v);
  std::sort(reg.labels.begin(), reg.labels.end());
  for (const v1::PortRange& p : r.ports()) reg.ports.push_back({p.first(), p.last()});
  return reg;
}

std::vector<scheduler::ReportedRun> RunsOf(const v1::AgentRegister& r) {
  std::vector<scheduler::ReportedRun> running;
  running.reserve(r.running_size());
  for (const v1::RunningTask& t : r.running()) {
    scheduler::ReportedRun run;
    run.run = FromProto(t.run());
    for (const auto& [name, port] : t.ports()) run.ports.emplace_back(name, port);
    run.gpu_devices.assign(t.gpu_devices().begin(), t.gpu_devices().end());
    running.push_back(std::move(run));
  }
  return running;
}

std::pair<scheduler::HostUsageSample, std::vector<scheduler::ReportedUsage>> UsageOf(
    const v1::AgentUsage& u) {
  scheduler::HostUsageSample sample;
  sample.used = Resources::Of(u.host_cpu_milli(), u.host_memory_used_bytes());
  sample.memory_total_bytes = u.host_memory_total_bytes();
  sample.interval = absl::Milliseconds(std::max<int64_t>(100, u.interval_ms()));
  std::vector<scheduler::ReportedUsage> runs;
  runs.reserve(u.runs_size());
  for (const v1::RunUsage& r : u.runs()) {
    runs.push_back({FromProto(r.run()), Resources::Of(r.cpu_milli(), r.memory_bytes())});
  }
  return {sample, std::move(runs)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::Open(
    Cluster* cluster, std::shared_ptr<AgentLink> link, const v1::AgentMessage& first,
    absl::Duration heartbeat_interval) {
  if (!first.has_register_() || first.register_().host().empty()) {
    return absl::InvalidArgumentError(
        "the first message of an agent stream must be register with a host name");
  }
  const v1::AgentRegister& r = first.register_();
  const std::string& host = r.host();
  scheduler::HostRegistration reg = RegistrationOf(r);
  std::vector<scheduler::ReportedRun> running = RunsOf(r);
  std::unique_ptr<AgentConnection> conn(new AgentConnection(cluster, std::move(link)));
  cluster->Attach(conn->link_);
  absl::Status registered =
      cluster->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        absl::Status s = core.RegisterHost(reg, running, now, out);
        if (s.ok()) core.SetIsolation(host, r.isolation());
        return s;
      });
  if (!registered.ok()) return registered;  // the destructor detaches
  v1::MasterMessage hello;
  hello.mutable_registered()->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(heartbeat_interval));
  conn->link_->Send(std::move(hello));
  return conn;
}

AgentConnection::~AgentConnection() { Close(); }

void AgentConnection::Close() {
  if (closed_) return;
  closed_ = true;
  cluster_->Detach(link_.get());
  link_->Close();
}

absl::Status AgentConnection::OnMessage(const v1::AgentMessage& msg) {
  const std::string& host = link_->host();
  if (msg.has_heartbeat()) {
    std::weak_ptr<AgentLink> weak = link_;
    cluster_->MutateAsync(
        [host](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
          return core.Heartbeat(host, now)
                     ? absl::OkStatus()
                     : absl::FailedPreconditionError("host was declared lost");
        },
        [weak](absl::Status s) {
          if (s.ok()) return;
          if (auto link = weak.lock()) link->Abort();  // the agent registers again
        });
  } else if (msg.has_logs()) {
    cluster_->DeliverLogs(msg.logs());
  } else if (msg.has_usage()) {
    auto [sample, runs] = UsageOf(msg.usage());
    cluster_->MutateAsync(
        [host, sample, runs](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
          core.ReportUsage(host, sample, runs, now);
          return absl::OkStatus();
        },
        [](absl::Status) {});
  } else if (msg.has_status()) {
    const v1::TaskStatusUpdate& u = msg.status();
    absl::StatusOr<TaskState> state = ParseReportedState(u.state());
    if (!state.ok()) return state.status();
    jobmgr::StatusReport report;
    report.run = FromProto(u.run());
    report.host = host;
    report.state = *state;
    report.exit_code = u.exit_code();
    report.signal = u.signal();
    report.reason = jobmgr::TaskReasonFromName(u.reason()).value_or(jobmgr::TaskReason::kNone);
    report.message = u.message();
    uint64_t seq = u.seq();
    std::weak_ptr<AgentLink> weak = link_;
    cluster_->MutateAsync(
        [host, report = std::move(report)](SchedulerCore& core, absl::Time now,
                                           scheduler::Actions& out) {
          core.Heartbeat(host, now);
          core.OnStatus(report, now, out);
          return absl::OkStatus();
        },
        [weak, seq](absl::Status s) {
          if (!s.ok()) return;  // not durable: no ack, the agent resends
          if (auto link = weak.lock()) {
            v1::MasterMessage ack;
            ack.mutable_ack()->set_seq(seq);
            link->Send(std::move(ack));
          }
        });
  }
  return absl::OkStatus();
}

}  // namespace paceline::master
