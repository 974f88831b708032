#include "masterd/cluster.h"

#include <utility>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "masterd/agent_connection.h"

namespace paceline::masterd {

Cluster::Cluster(scheduler::CoreConfig core_config, store::Store* store, ClusterOptions options)
    : options_(options),
      committer_(std::make_unique<store::GroupCommitter>(store)),
      loop_(
          options.cycle, [this] { OnTick(); }, [this] { commits_.CommitTurn(); }),
      commits_(committer_.get(), &loop_, &hub_, &agents_,
               [this](const absl::Status& s) {
                 keeper_.OnStoreFailure(s);
                 return keeper_.refusal();
               }),
      keeper_(std::move(core_config), options.led_by_lease,
              CoreKeeper::Parts{committer_.get(), &loop_, &commits_, &hub_, &agents_},
              options.standby_read_bound) {}

Cluster::~Cluster() { Stop(); }

absl::Status Cluster::Start() {
  RETURN_IF_ERROR(keeper_.Start());
  loop_.Start();
  return absl::OkStatus();
}

void Cluster::Stop() {
  hub_.CloseAll(absl::UnavailableError("the master is stopping"));
  loop_.Stop();
  committer_.reset();  // drains pending commits
  agents_.CloseAll();
}

absl::Status Cluster::Mutate(const MutateFn& fn) {
  absl::Notification done;
  absl::Status result;
  MutateAsync(fn, [&](absl::Status s) {
    result = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

void Cluster::MutateAsync(MutateFn fn, std::function<void(absl::Status)> done) {
  loop_.Post([this, fn = std::move(fn), done = std::move(done)]() mutable {
    if (!keeper_.refusal().ok()) {
      done(keeper_.refusal());
      return;
    }
    scheduler::Actions actions;
    absl::Time now = absl::Now();
    absl::Status s = fn(keeper_.core(), now, actions);
    if (!s.ok()) {
      // The core validates before it changes anything: nothing to persist or undo.
      done(s);
      return;
    }
    commits_.Apply(keeper_.core(), std::move(actions), now, std::move(done));
    loop_.Kick();
  });
}

void Cluster::RunRead(const ReadFn& fn) {
  loop_.Read([&] { fn(keeper_.ReadCore()); });
}

void Cluster::OnTick() {
  if (!keeper_.refusal().ok()) {
    keeper_.Recover();
    return;
  }
  scheduler::Actions actions;
  absl::Time now = absl::Now();
  keeper_.core().RunCycle(now, actions);
  {
    absl::MutexLock lock(&cycles_mu_);
    cycle_times_.Add(absl::Now() - now);
  }
  if (!actions.batch.empty() || !actions.launches.empty() || !actions.kills.empty()) {
    commits_.Apply(keeper_.core(), std::move(actions), now, nullptr);
  }
}

absl::StatusOr<std::vector<records::TaskEvent>> Cluster::ReadEvents(TaskId task, size_t limit) {
  absl::StatusOr<std::vector<records::TaskEvent>> result;
  committer_->RunOnWriter([&](store::Store& s) { result = s.ListEvents(task, limit); });
  return result;
}

absl::StatusOr<std::unique_ptr<api::AgentProtocol>> Cluster::OpenAgent(
    std::shared_ptr<api::AgentLink> link, const v1::AgentMessage& first) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<AgentConnection> conn,
      AgentConnection::Open(this, std::move(link), first, options_.heartbeat_interval));
  return std::unique_ptr<api::AgentProtocol>(std::move(conn));
}

}  // namespace paceline::masterd
