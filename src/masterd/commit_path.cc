#include "masterd/commit_path.h"

#include <iterator>
#include <memory>
#include <utility>

namespace paceline::masterd {

CommitPath::CommitPath(store::GroupCommitter* committer, EventLoop* loop, api::EventHub* hub,
                       AgentRegistry* agents, FailureFn on_failure)
    : committer_(committer),
      loop_(loop),
      hub_(hub),
      agents_(agents),
      on_failure_(std::move(on_failure)) {}

void CommitPath::NewEpoch() {
  published_states_.clear();
  ++epoch_;
}

void CommitPath::Apply(const scheduler::SchedulerCore& core, scheduler::Actions actions,
                       absl::Time now, std::function<void(absl::Status)> done) {
  if (actions.batch.empty()) {
    agents_->Dispatch(actions);
    if (done) done(absl::OkStatus());
    return;
  }
  // The watch events are built now, while the core's state matches the batch, and published
  // once the batch is durable (commits complete in order, so they are published in order).
  std::vector<v1::WatchEvent> watch;
  if (hub_->watching()) {
    watch = wire::WatchEventsOf(actions.batch, core.jobs(), now, published_states_);
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

void CommitPath::CommitTurn() {
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

void CommitPath::Submit(records::WriteBatch batch, scheduler::Actions actions,
                        std::vector<v1::WatchEvent> watch,
                        std::vector<std::function<void(absl::Status)>> dones) {
  auto shared = std::make_shared<scheduler::Actions>(std::move(actions));
  std::vector<records::UsageRecord> usage = batch.add_usage;
  committer_->Submit(
      std::move(batch), [this, shared, watch = std::move(watch), dones = std::move(dones),
                         usage = std::move(usage), epoch = epoch_](absl::Status s) mutable {
        loop_->Post([this, shared, watch = std::move(watch), dones = std::move(dones),
                     usage = std::move(usage), s, epoch] {
          auto finish = [&](const absl::Status& result) {
            for (const auto& done : dones) done(result);
          };
          if (epoch != epoch_) {  // reloaded since: this change is not in the new core
            finish(absl::UnavailableError("the master reloaded its state; retry"));
            return;
          }
          if (!s.ok()) {
            finish(on_failure_(s));
            return;
          }
          if (!watch.empty()) hub_->Publish(watch);
          if (on_usage_ && !usage.empty()) on_usage_(usage);
          agents_->Dispatch(*shared);
          finish(absl::OkStatus());
        });
      });
}

}  // namespace paceline::masterd
