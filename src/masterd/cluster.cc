#include "masterd/cluster.h"

#include <iostream>
#include <utility>

#include "absl/time/clock.h"
#include "common/status.h"
#include "masterd/agent_connection.h"
#include "store/load_queue.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"

namespace paceline::masterd {

namespace {
constexpr absl::Duration kReloadEvery = absl::Seconds(1);
constexpr absl::Duration kFollowEvery = absl::Milliseconds(500);
// How far a start's load may read ahead of the rebuild, in batches of task records.
constexpr size_t kLoadBatchesAhead = 16;

// A duration for the log, to the millisecond.
std::string Ms(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}
}  // namespace

Cluster::Cluster(scheduler::CoreConfig core_config, store::Store* store, ClusterOptions options)
    : options_(options),
      core_config_(std::move(core_config)),
      store_(store),
      committer_(std::make_unique<store::GroupCommitter>(store)),
      loop_(
          options.cycle, [this] { OnTick(); }, [this] { CommitTurn(); }) {}

Cluster::~Cluster() { Stop(); }

absl::Status Cluster::Start() {
  if (options_.led_by_lease) {
    // A standby serves nothing until the leadership makes it the leader (BecomeLeader).
    ASSIGN_OR_RETURN(core_, scheduler::SchedulerCore::Create(core_config_));
    SetRefusal(absl::UnavailableError("this master is a standby and has not led yet"));
  } else {
    RETURN_IF_ERROR(LoadAndRebuild());
  }
  loop_.Start();
  return absl::OkStatus();
}

absl::Status Cluster::LoadAndRebuild() {
  const absl::Time start = absl::Now();
  // The writer thread reads the store while this one rebuilds from what it has read so far.
  store::LoadQueue queue(kLoadBatchesAhead);
  committer_->SubmitRead([&queue](store::Store& s) { queue.Close(s.LoadInto(queue)); });
  std::optional<records::StoreContents> head = queue.WaitHead();
  if (!head) return queue.Wait();
  const absl::Time head_read = absl::Now();
  size_t tasks = 0;
  auto batches = [&](const records::TaskBatchFn& take) -> absl::Status {
    while (std::optional<std::vector<records::TaskRecord>> batch = queue.Next()) {
      tasks += batch->size();
      RETURN_IF_ERROR(take(*batch));
      queue.Recycle(*std::move(batch));
    }
    return queue.Wait();
  };
  absl::Status rebuilt = Rebuild(*head, batches);
  if (!rebuilt.ok()) {
    queue.Cancel();
    (void)queue.Wait();  // the writer is done with the queue
    return rebuilt;
  }
  std::cerr << "master: rebuilt " << head->jobs.size() << " jobs and " << tasks
            << " tasks from the store in " << Ms(absl::Now() - start)
            << " (all but the tasks read in " << Ms(head_read - start) << ")" << std::endl;
  return absl::OkStatus();
}

absl::Status Cluster::BecomeLeader(const std::function<void(store::Store&)>& fence) {
  return loop_.Call<absl::Status>([&] {
    committer_->RunOnWriter(fence);
    return TakeOver();
  });
}

absl::Status Cluster::TakeOver() {
  const absl::Time start = absl::Now();
  ++mirror_generation_;  // a read of changes still in flight is not applied
  store::StoreMirror mirror = std::exchange(mirror_, store::StoreMirror{});
  {
    absl::MutexLock lock(&refusal_mu_);
    followed_at_ = absl::InfinitePast();
  }
  if (mirror.rev() == store::kNoRevision) return LoadAndRebuild();  // nothing followed
  // The lease is ours and fences the old leader: these are the last changes it made.
  absl::StatusOr<store::StoreChanges> delta;
  committer_->RunOnWriter([&](store::Store& s) { delta = s.ReadChanges(mirror.rev()); });
  RETURN_IF_ERROR(delta.status());
  const int64_t from = mirror.rev();
  const size_t rows = delta->rows();
  const size_t tasks = mirror.tasks();
  mirror.Apply(*std::move(delta));
  const int64_t to = mirror.rev();
  absl::Status s = Rebuild(std::move(mirror).TakeContents());
  if (s.ok()) {
    std::cerr << "master: took over from the followed state in " << Ms(absl::Now() - start) << ": "
              << rows << " changed rows read (revisions " << from << " to " << to << "), " << tasks
              << " tasks followed" << std::endl;
  }
  return s;
}

void Cluster::Follow() {
  if (!followable_ || following_ || absl::Now() < next_follow_) return;
  following_ = true;
  next_follow_ = absl::Now() + kFollowEvery;
  // Read on the writer thread (a standby commits nothing), applied on the loop.
  committer_->SubmitRead([this, since = mirror_.rev(),
                          generation = mirror_generation_](store::Store& s) {
    const absl::Time snapshot = absl::Now();
    auto changes = std::make_shared<absl::StatusOr<store::StoreChanges>>(s.ReadChanges(since));
    loop_.Post([this, changes, generation, snapshot] {
      following_ = false;
      if (generation != mirror_generation_) return;  // taken over meanwhile
      if (!changes->ok()) {
        if (changes->status().code() == absl::StatusCode::kUnimplemented) followable_ = false;
        if (changes->status() != follow_error_) {
          std::cerr << "master: following the store failed: " << changes->status().message()
                    << std::endl;
        }
        follow_error_ = changes->status();
        return;
      }
      follow_error_ = absl::OkStatus();
      const store::StoreChanges& c = **changes;
      if (on_records_ &&
          (!c.changed.tokens.empty() || !c.changed.secrets.empty() || !c.deleted_secrets.empty())) {
        on_records_(c, false);
      }
      mirror_.Apply(*std::move(*changes));
      absl::MutexLock lock(&refusal_mu_);
      followed_at_ = snapshot;
    });
  });
}

absl::Duration Cluster::ReplicationLag() const {
  absl::MutexLock lock(&refusal_mu_);
  if (followed_at_ == absl::InfinitePast()) return absl::InfiniteDuration();
  return absl::Now() - followed_at_;
}

void Cluster::StepDown(const absl::Status& why) {
  loop_.Call<bool>([&] {
    Refuse(why);
    return true;
  });
}

absl::Status Cluster::Serving() const {
  absl::MutexLock lock(&refusal_mu_);
  return shared_refusal_;
}

void Cluster::SetRefusal(absl::Status s) {
  refusal_ = s;
  absl::MutexLock lock(&refusal_mu_);
  shared_refusal_ = std::move(s);
}

absl::Status Cluster::Rebuild(const records::StoreContents& contents,
                              const records::TaskBatches& more) {
  ASSIGN_OR_RETURN(std::unique_ptr<scheduler::SchedulerCore> core,
                   scheduler::SchedulerCore::Create(core_config_));
  scheduler::Actions actions;
  RETURN_IF_ERROR(core->Restore(contents, absl::Now(), actions, more));
  committer_->Resume();
  RETURN_IF_ERROR(committer_->CommitSync(std::move(actions.batch)));
  core_ = std::move(core);
  if (on_records_) {
    store::StoreChanges all;
    all.changed.tokens = contents.tokens;
    all.changed.secrets = contents.secrets;
    on_records_(all, true);
  }
  published_states_.clear();
  ++epoch_;
  SetRefusal(absl::OkStatus());
  return absl::OkStatus();
}

void Cluster::TryReload() {
  if (reloading_ || absl::Now() < next_reload_) return;
  reloading_ = true;
  // The store is read on the writer thread, so that the loop keeps answering reads meanwhile.
  committer_->SubmitRead([this](store::Store& s) {
    auto contents = std::make_shared<absl::StatusOr<records::StoreContents>>(s.Load());
    loop_.Post([this, contents] {
      reloading_ = false;
      absl::Status rebuilt = contents->ok() ? Rebuild(**contents) : contents->status();
      if (!rebuilt.ok()) {
        // A commit that failed again keeps the committer stopped: the next try starts over.
        next_reload_ = absl::Now() + kReloadEvery;
        std::cerr << "master: reloading from the store failed: " << rebuilt.message()
                  << "; retrying in " << absl::FormatDuration(kReloadEvery) << std::endl;
        return;
      }
      std::cerr << "master: reloaded the cluster state from the store" << std::endl;
    });
  });
}

void Cluster::OnStoreFailure(const absl::Status& s) {
  if (!refusal_.ok()) return;
  if (options_.led_by_lease) {  // led by the leadership: it decides what comes next
    Refuse(absl::UnavailableError(
        s.code() == absl::StatusCode::kFailedPrecondition
            ? absl::StrCat("this master lost the leader lease (", s.message(), ")")
            : absl::StrCat("the store is unavailable (", s.message(),
                           "); this master leads again once it answers, or another takes over")));
    return;
  }
  Refuse(absl::UnavailableError(
      absl::StrCat("the store is unavailable (", s.message(),
                   "); the master reloads from it by itself once it answers again")));
  next_reload_ = absl::Now() + kReloadEvery;
}

void Cluster::Refuse(const absl::Status& why) {
  SetRefusal(why);
  std::cerr << "master: " << why.message() << std::endl;
  // Watchers and agents start over against the reloaded state, or another leader.
  hub_.CloseAll(why);
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Abort();  // ends the stream: they reconnect
}

void Cluster::Stop() {
  hub_.CloseAll(absl::UnavailableError("the master is stopping"));
  loop_.Stop();
  committer_.reset();  // drains pending commits
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Close();
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
    if (!refusal_.ok()) {
      done(refusal_);
      return;
    }
    scheduler::Actions actions;
    absl::Time now = absl::Now();
    absl::Status s = fn(*core_, now, actions);
    if (!s.ok()) {
      // The core validates before it changes anything: nothing to persist or undo.
      done(s);
      return;
    }
    Apply(std::move(actions), now, std::move(done));
    loop_.Kick();
  });
}

void Cluster::Apply(scheduler::Actions actions, absl::Time now,
                    std::function<void(absl::Status)> done) {
  if (actions.batch.empty()) {
    Dispatch(actions);
    if (done) done(absl::OkStatus());
    return;
  }
  // The watch events are built now, while the core's state matches the batch, and published
  // once the batch is durable (commits complete in order, so they are published in order).
  std::vector<v1::WatchEvent> watch;
  if (hub_.watching()) {
    watch = wire::WatchEventsOf(actions.batch, core_->jobs(), now, published_states_);
  } else {
    published_states_.clear();
  }
  std::vector<std::function<void(absl::Status)>> dones;
  if (done) dones.push_back(std::move(done));
  if (!records::BatchCoalescer::Mergeable(actions.batch)) {
    CommitTurn();
    records::WriteBatch batch = std::move(actions.batch);
    Submit(std::move(batch), std::move(actions), std::move(watch), std::move(dones));
    return;
  }
  // A reload in this turn: what the turn held was computed on the old core (CommitTurn drops
  // it); this batch starts the new core's turn.
  if (!turn_.batch.empty() && turn_.epoch != epoch_) CommitTurn();
  if (turn_.batch.empty()) turn_.epoch = epoch_;
  turn_.batch.Add(std::move(actions.batch));
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(turn_.actions.launches, actions.launches);
  append(turn_.actions.kills, actions.kills);
  append(turn_.watch, watch);
  append(turn_.dones, dones);
}

void Cluster::CommitTurn() {
  if (turn_.batch.empty()) return;
  Turn turn = std::move(turn_);
  turn_ = Turn();
  if (turn.epoch != epoch_) {  // reloaded in this turn: these changes are not in the new core
    for (auto& done : turn.dones)
      done(absl::UnavailableError("the master reloaded its state; retry"));
    return;
  }
  Submit(turn.batch.Take(), std::move(turn.actions), std::move(turn.watch), std::move(turn.dones));
}

void Cluster::Submit(records::WriteBatch batch, scheduler::Actions actions,
                     std::vector<v1::WatchEvent> watch,
                     std::vector<std::function<void(absl::Status)>> dones) {
  auto shared = std::make_shared<scheduler::Actions>(std::move(actions));
  committer_->Submit(
      std::move(batch), [this, shared, watch = std::move(watch), dones = std::move(dones),
                         epoch = epoch_](absl::Status s) mutable {
        loop_.Post([this, shared, watch = std::move(watch), dones = std::move(dones), s, epoch] {
          auto finish = [&](const absl::Status& result) {
            for (const auto& done : dones) done(result);
          };
          if (epoch != epoch_) {  // reloaded since: this change is not in the new core
            finish(absl::UnavailableError("the master reloaded its state; retry"));
            return;
          }
          if (!s.ok()) {
            OnStoreFailure(s);
            finish(refusal_);
            return;
          }
          if (!watch.empty()) hub_.Publish(watch);
          Dispatch(*shared);
          finish(absl::OkStatus());
        });
      });
}

void Cluster::Dispatch(const scheduler::Actions& actions) {
  absl::MutexLock lock(&sessions_mu_);
  // One burst per host: a link that batches sends a host's launches in one stream message.
  absl::flat_hash_map<api::AgentLink*, std::vector<v1::MasterMessage>> bursts;
  for (const scheduler::Launch& l : actions.launches) {
    auto it = sessions_.find(l.host);
    if (it == sessions_.end()) continue;  // the host is gone; it will be declared lost
    v1::MasterMessage msg = wire::ToLaunchMessage(l);
    if (on_launch_) on_launch_(l, *msg.mutable_launch());
    for (v1::GangPeer& peer : *msg.mutable_launch()->mutable_peers()) {
      auto s = sessions_.find(peer.host());
      if (s != sessions_.end()) peer.set_address(s->second->address());
    }
    bursts[it->second.get()].push_back(std::move(msg));
  }
  for (const jobmgr::KillCommand& k : actions.kills) {
    auto it = sessions_.find(k.host);
    if (it == sessions_.end()) continue;
    bursts[it->second.get()].push_back(wire::ToKillMessage(k));
  }
  for (auto& [link, msgs] : bursts) link->SendAll(std::move(msgs));
}

void Cluster::OnTick() {
  if (!refusal_.ok()) {
    if (options_.led_by_lease) {
      Follow();
    } else {
      TryReload();
    }
    return;
  }
  scheduler::Actions actions;
  absl::Time now = absl::Now();
  core_->RunCycle(now, actions);
  {
    absl::MutexLock lock(&cycles_mu_);
    cycle_times_.Add(absl::Now() - now);
  }
  if (!actions.batch.empty() || !actions.launches.empty() || !actions.kills.empty()) {
    Apply(std::move(actions), now, nullptr);
  }
}

absl::StatusOr<std::vector<records::TaskEvent>> Cluster::ReadEvents(TaskId task, size_t limit) {
  absl::StatusOr<std::vector<records::TaskEvent>> result;
  committer_->RunOnWriter([&](store::Store& s) { result = s.ListEvents(task, limit); });
  return result;
}

absl::StatusOr<v1::LogResponse> Cluster::FetchLogs(const std::string& host, v1::LogRequest request,
                                                   absl::Duration timeout) {
  auto waiter = std::make_shared<LogWaiter>();
  waiter->host = host;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&logs_mu_);
    id = next_log_request_++;
    log_waiters_[id] = waiter;
  }
  request.set_request_id(id);
  bool sent = false;
  {
    absl::MutexLock lock(&sessions_mu_);
    auto it = sessions_.find(host);
    if (it != sessions_.end() && !it->second->closed()) {
      v1::MasterMessage msg;
      *msg.mutable_logs() = std::move(request);
      it->second->Send(std::move(msg));
      sent = true;
    }
  }
  bool answered = sent && waiter->done.WaitForNotificationWithTimeout(timeout);
  {
    absl::MutexLock lock(&logs_mu_);
    log_waiters_.erase(id);
  }
  if (!sent) {
    return absl::UnavailableError(
        absl::StrCat("host ", host, " is not connected; its logs cannot be read now"));
  }
  if (!answered) {
    return absl::UnavailableError(absl::StrCat("host ", host, " did not send the logs in time"));
  }
  if (!waiter->response.error().empty()) {
    return absl::NotFoundError(absl::StrCat("host ", host, ": ", waiter->response.error()));
  }
  return waiter->response;
}

void Cluster::DeliverLogs(const std::string& host, const v1::LogResponse& response) {
  absl::MutexLock lock(&logs_mu_);
  auto it = log_waiters_.find(response.request_id());
  if (it == log_waiters_.end()) return;  // too late: the caller gave up
  if (it->second->host != host) return;  // not asked of this host
  it->second->response = response;
  it->second->done.Notify();
}

void Cluster::Attach(std::shared_ptr<api::AgentLink> session) {
  absl::MutexLock lock(&sessions_mu_);
  auto [it, inserted] = sessions_.try_emplace(session->host(), session);
  if (!inserted) {
    it->second->Close();  // a newer connection of the same agent replaces the old one
    it->second = std::move(session);
  }
}

absl::StatusOr<std::unique_ptr<api::AgentProtocol>> Cluster::OpenAgent(
    std::shared_ptr<api::AgentLink> link, const v1::AgentMessage& first) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<AgentConnection> conn,
      AgentConnection::Open(this, std::move(link), first, options_.heartbeat_interval));
  return std::unique_ptr<api::AgentProtocol>(std::move(conn));
}

void Cluster::Broadcast(const v1::MasterMessage& msg) {
  absl::MutexLock lock(&sessions_mu_);
  for (auto& [host, session] : sessions_) session->Send(msg);
}

void Cluster::Detach(const api::AgentLink* session) {
  absl::MutexLock lock(&sessions_mu_);
  auto it = sessions_.find(session->host());
  if (it != sessions_.end() && it->second.get() == session) sessions_.erase(it);
}

}  // namespace paceline::masterd
