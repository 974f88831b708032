#include "masterd/agent_connection.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "common/task_state.h"
#include "tls/join.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"
#include "wire/stream_batch.h"

namespace paceline::masterd {
namespace {

using scheduler::SchedulerCore;

// Applies the unhealthy GPUs `host`'s agent reported. A list the core refuses (a device the
// host does not have) is logged and changes nothing: the agent keeps its connection.
void ApplyGpuFaults(SchedulerCore& core, const std::string& host,
                    std::vector<hostmgr::GpuFault> faults, absl::Time now,
                    scheduler::Actions& out) {
  if (absl::Status g = core.agents().SetGpuFaults(host, std::move(faults), now, out); !g.ok()) {
    std::cerr << "master: host " << host << ": GPU health: " << g << std::endl;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::Open(
    Cluster* cluster, std::shared_ptr<api::AgentLink> link, const v1::AgentMessage& first,
    absl::Duration heartbeat_interval) {
  if (!first.has_register_() || first.register_().host().empty()) {
    return absl::InvalidArgumentError(
        "the first message of an agent stream must be register with a host name");
  }
  const v1::AgentRegister& r = first.register_();
  const std::string& host = r.host();
  scheduler::HostRegistration reg = wire::RegistrationOf(r);
  hostmgr::AgentFacts facts{r.isolation(), r.version(), r.commit()};
  if (!link->certificate_pem().empty()) {
    if (absl::StatusOr<tls::Validity> v = tls::CertificateValidity(link->certificate_pem());
        v.ok()) {
      facts.certificate_not_after = v->not_after;
    }
  }
  reg.address = link->address();  // recorded with the host: a standby answers DNS from it
  std::vector<scheduler::ReportedRun> running = wire::RunsOf(r);
  std::vector<hostmgr::GpuFault> faults = wire::GpuFaultsOf(r.gpu_faults());
  std::unique_ptr<AgentConnection> conn(new AgentConnection(cluster, std::move(link)));
  cluster->agents().Attach(conn->link_);
  absl::Status registered =
      cluster->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        absl::Status s = core.agents().RegisterHost(reg, running, now, out);
        if (!s.ok()) return s;
        core.agents().SetAgentFacts(host, std::move(facts));
        // Its unhealthy GPUs (none: all healthy again), after its runs are adopted (they keep
        // their shares).
        ApplyGpuFaults(core, host, std::move(faults), now, out);
        return absl::OkStatus();
      });
  if (!registered.ok()) return registered;  // the destructor detaches
  v1::MasterMessage hello;
  hello.mutable_registered()->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(heartbeat_interval));
  hello.mutable_registered()->set_accepts_batches(true);
  conn->link_->Send(std::move(hello));
  return conn;
}

AgentConnection::~AgentConnection() { Close(); }

void AgentConnection::Close() {
  if (closed_) return;
  closed_ = true;
  cluster_->agents().Detach(link_.get());
  link_->Close();
}

absl::Status AgentConnection::OnMessage(const v1::AgentMessage& msg) {
  // Everything is checked before anything is applied: a bad batch changes nothing.
  RETURN_IF_ERROR(wire::CheckBatch(msg));
  std::vector<std::pair<jobmgr::StatusReport, uint64_t>> reports;
  absl::Status bad;
  int index = 0;
  wire::ForEachMessage(msg, [&](const v1::AgentMessage& m) {
    if (bad.ok() && m.has_status()) {
      absl::StatusOr<jobmgr::StatusReport> status = wire::StatusReportOf(m.status(), link_->host());
      if (status.ok()) {
        reports.emplace_back(*std::move(status), m.status().seq());
      } else {
        bad = msg.has_batch() ? absl::InvalidArgumentError(absl::StrCat(
                                    "batch.messages[", index, "].", status.status().message()))
                              : status.status();
      }
    }
    ++index;
  });
  if (!bad.ok()) return bad;
  wire::ForEachMessage(msg, [&](const v1::AgentMessage& m) { Apply(m); });
  if (reports.empty()) return absl::OkStatus();
  bool post = false;
  {
    absl::MutexLock lock(&statuses_->mu);
    auto& queued = statuses_->reports;
    queued.insert(queued.end(), std::make_move_iterator(reports.begin()),
                  std::make_move_iterator(reports.end()));
    post = !std::exchange(statuses_->posted, true);
  }
  if (post) PostStatuses();
  return absl::OkStatus();
}

void AgentConnection::Apply(const v1::AgentMessage& msg) {
  const std::string& host = link_->host();
  if (msg.has_heartbeat()) {
    std::weak_ptr<api::AgentLink> weak = link_;
    cluster_->MutateAsync(
        [host](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
          return core.agents().Heartbeat(host, now)
                     ? absl::OkStatus()
                     : absl::FailedPreconditionError("host was declared lost");
        },
        [weak](absl::Status s) {
          if (s.ok()) return;
          if (auto link = weak.lock()) link->Abort();  // the agent registers again
        });
  } else if (msg.has_logs()) {
    cluster_->agents().DeliverLogs(host, msg.logs());
  } else if (msg.has_exec_output()) {
    // Routed at the edge, on this stream's thread: exec traffic never reaches the loop.
    cluster_->agents().DeliverExec(link_.get(), msg.exec_output());
  } else if (msg.has_gpu_health()) {
    cluster_->MutateAsync(
        [host, faults = wire::GpuFaultsOf(msg.gpu_health().faults())](
            SchedulerCore& core, absl::Time now, scheduler::Actions& out) mutable {
          ApplyGpuFaults(core, host, std::move(faults), now, out);
          return absl::OkStatus();
        },
        [host](absl::Status s) {
          if (!s.ok()) std::cerr << "master: host " << host << ": GPU health: " << s << std::endl;
        });
  } else if (msg.has_usage()) {
    auto [sample, runs] = wire::UsageOf(msg.usage());
    cluster_->MutateAsync(
        [host, sample, runs](SchedulerCore& core, absl::Time now, scheduler::Actions&) {
          core.agents().ReportUsage(host, sample, runs, now);
          return absl::OkStatus();
        },
        [](absl::Status) {});
  }
  // Status updates are queued by OnMessage, once all of them are valid.
}

void AgentConnection::PostStatuses() {
  auto last_seq = std::make_shared<uint64_t>(0);  // of the updates the closure applied
  std::weak_ptr<api::AgentLink> weak = link_;
  cluster_->MutateAsync(
      [host = link_->host(), queue = statuses_, last_seq](SchedulerCore& core, absl::Time now,
                                                          scheduler::Actions& out) {
        std::vector<std::pair<jobmgr::StatusReport, uint64_t>> reports;
        {
          absl::MutexLock lock(&queue->mu);
          reports.swap(queue->reports);
          queue->posted = false;
        }
        core.agents().Heartbeat(host, now);
        for (const auto& [report, seq] : reports) {
          core.agents().OnStatus(report, now, out);
          *last_seq = std::max(*last_seq, seq);
        }
        return absl::OkStatus();
      },
      [weak, last_seq, queue = statuses_](absl::Status s) {
        if (!s.ok()) {
          // A refused change may not have run the closure above: let the next update post.
          absl::MutexLock lock(&queue->mu);
          queue->posted = false;
          return;  // not durable: no ack, the agent resends
        }
        if (*last_seq == 0) return;
        if (auto link = weak.lock()) {
          v1::MasterMessage ack;
          ack.mutable_ack()->set_seq(*last_seq);
          link->Send(std::move(ack));
        }
      });
}

}  // namespace paceline::masterd
