#pragma once
// AgentConnection: the master's side of the agent protocol (proto/paceline/v1/host.proto) for
// one connection, whatever transport carries it (AgentLink). The gRPC AgentService and the
// in-process simulated hosts of `paceline bench scale` both go through it, so a benchmark
// exercises the code path real agents use.
//
// Protocol: the first message must be `register`; the master reconciles the runs the agent
// reports, answers `registered` (saying that it reads batches, wire/stream_batch.h), and from
// then on acknowledges every status update once its effect is durable (at least once: the
// agent resends until acknowledged; a duplicate changes nothing). Acknowledgements are
// cumulative ("every update up to seq is durable"): the updates that arrive while the loop is
// busy are applied together, in order, in one closure of the loop, and answered with one
// acknowledgement of the last. A heartbeat from a host the master has declared lost aborts the
// link: the agent connects and registers again. Usage reports are soft state (applied, never
// stored or acked).
//
// Lifetime: Open() attaches the link to the cluster's AgentRegistry; Close() (or the
// destructor) detaches and closes it. Thread-safety: OnMessage is called by one thread at a time
// (the transport's reader); all state lives in the Cluster.

#include <memory>

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/agent_link.h"
#include "api/backend.h"
#include "masterd/cluster.h"

namespace paceline::masterd {

class AgentConnection final : public api::AgentProtocol {
 public:
  // Registers the agent from its first message and sends `registered` with the heartbeat
  // interval. INVALID_ARGUMENT when `first` is not a register with a host name; the core's
  // error when the registration is refused (the link is detached and closed then).
  static absl::StatusOr<std::unique_ptr<AgentConnection>> Open(Cluster* cluster,
                                                               std::shared_ptr<api::AgentLink> link,
                                                               const v1::AgentMessage& first,
                                                               absl::Duration heartbeat_interval);
  ~AgentConnection();
  AgentConnection(const AgentConnection&) = delete;
  AgentConnection& operator=(const AgentConnection&) = delete;

  // One message from the agent, or a batch of them (wire/stream_batch.h) handled in order.
  // INVALID_ARGUMENT (naming the field) for a malformed status update or batch, and then
  // nothing of the message is applied: the transport ends the connection with it.
  absl::Status OnMessage(const v1::AgentMessage& msg) override;
  // Detaches and closes the link (idempotent).
  void Close() override;

  const std::string& host() const { return link_->host(); }

 private:
  AgentConnection(Cluster* cluster, std::shared_ptr<api::AgentLink> link)
      : cluster_(cluster), link_(std::move(link)) {}

  // Status updates waiting for the loop, with their sequence numbers: the transport's reader
  // adds; the one closure posted for them takes them all (shared: it may outlive the link).
  struct StatusQueue {
    absl::Mutex mu;
    std::vector<std::pair<jobmgr::StatusReport, uint64_t>> reports ABSL_GUARDED_BY(mu);
    bool posted ABSL_GUARDED_BY(mu) = false;
  };
  void PostStatuses();
  // One checked message that is not a batch; status updates excepted (OnMessage queues them).
  void Apply(const v1::AgentMessage& msg);

  Cluster* const cluster_;
  const std::shared_ptr<api::AgentLink> link_;
  const std::shared_ptr<StatusQueue> statuses_ = std::make_shared<StatusQueue>();
  bool closed_ = false;
};

}  // namespace paceline::masterd
