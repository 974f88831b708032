#include "masterd/core_keeper.h"

#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "scheduler/fair_share_seed.h"
#include "store/load_queue.h"

namespace paceline::masterd {

namespace {
constexpr absl::Duration kReloadEvery = absl::Seconds(1);
// How far a start's load may read ahead of the rebuild, in batches of task records.
constexpr size_t kLoadBatchesAhead = 16;

// A duration for the log, to the millisecond.
std::string Ms(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}

// Fair share with memory: a new core's decayed usage, from the usage the store keeps by hour
// (scheduler/fair_share_seed.h), so that a restart or a take-over does not forget who used
// much lately. Nothing is read while no pool has the policy; a failed read leaves the usage at
// zero, and says so.
void SeedFairShare(scheduler::SchedulerCore& core, const records::StoreContents& contents,
                   store::GroupCommitter& committer) {
  const absl::Time now = absl::Now();
  const std::optional<absl::Time> since = scheduler::UsageSeedSince(core.resources().tree(), now);
  if (!since.has_value()) return;
  absl::StatusOr<std::vector<records::UsageRecord>> hours;
  committer.RunOnWriter(
      [&](store::Store& s) { hours = s.ListUsage({.since = *since, .until = now, .pool = ""}); });
  if (!hours.ok()) {
    std::cerr << "master: fair share starts from zero usage: " << hours.status() << std::endl;
    return;
  }
  Resources capacity;
  for (const records::HostRecord& h : contents.hosts) {
    if (h.maintenance != records::HostMaintenance::kDown) capacity += h.capacity;
  }
  const size_t seeded = core.pools().SeedUsage(*hours, capacity, now);
  std::cerr << "master: fair share: the usage of " << seeded << " pool(s) seeded from "
            << hours->size() << " stored hour record(s)" << std::endl;
}
}  // namespace

CoreKeeper::CoreKeeper(scheduler::CoreConfig core_config, bool led_by_lease, Parts parts,
                       absl::Duration standby_read_bound)
    : core_config_(std::move(core_config)),
      led_by_lease_(led_by_lease),
      parts_(parts),
      follower_(parts.committer, parts.loop,
                [this](const store::StoreChanges& c) {
                  if (on_records_ && (!c.changed.tokens.empty() || !c.changed.secrets.empty() ||
                                      !c.deleted_secrets.empty())) {
                    on_records_(c, false);
                  }
                  if (parts_.hub->watching()) watch_.Note(c, follower_.mirror(), absl::Now());
                }),
      standby_read_bound_(standby_read_bound),
      reads_(core_config_) {}

absl::Status CoreKeeper::Start() {
  if (!led_by_lease_) return LoadAndRebuild();
  // A standby serves nothing until the leadership makes it the leader (BecomeLeader).
  ASSIGN_OR_RETURN(core_, scheduler::SchedulerCore::Create(core_config_));
  SetRefusal(absl::UnavailableError("this master is a standby and has not led yet"));
  return absl::OkStatus();
}

absl::Status CoreKeeper::LoadAndRebuild() {
  const absl::Time start = absl::Now();
  // The writer thread reads the store while this one rebuilds from what it has read so far.
  store::LoadQueue queue(kLoadBatchesAhead);
  parts_.committer->SubmitRead([&queue](store::Store& s) { queue.Close(s.LoadInto(queue)); });
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

absl::Status CoreKeeper::BecomeLeader(const std::function<void(store::Store&)>& fence) {
  return parts_.loop->Call<absl::Status>([&] {
    parts_.committer->RunOnWriter(fence);
    return TakeOver();
  });
}

absl::Status CoreKeeper::TakeOver() {
  const absl::Time start = absl::Now();
  reads_.Clear();
  watch_.Clear();
  store::StoreMirror mirror = follower_.Take();
  if (mirror.rev() == store::kNoRevision) return LoadAndRebuild();  // nothing followed
  // The lease is ours and fences the old leader: these are the last changes it made.
  absl::StatusOr<store::StoreChanges> delta;
  parts_.committer->RunOnWriter([&](store::Store& s) { delta = s.ReadChanges(mirror.rev()); });
  // The store compacted the changes since the followed revision: a full load instead.
  if (delta.status().code() == absl::StatusCode::kOutOfRange) return LoadAndRebuild();
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

absl::Duration CoreKeeper::ReplicationLag() const { return follower_.Lag(); }

absl::StatusOr<api::AnswerStamp> CoreKeeper::Admit(bool followed_read, int64_t at_least) {
  const absl::Time deadline = absl::Now() + kRevisionWait;
  while (true) {
    absl::Status refusal = Serving();
    if (refusal.ok()) return api::AnswerStamp{led_by_lease_ ? "leader" : "", -1, {}};
    if (!followed_read || !led_by_lease_ || standby_read_bound_ <= absl::ZeroDuration()) {
      return refusal;
    }
    const absl::Duration lag = follower_.Lag();
    if (lag > standby_read_bound_) {
      return absl::UnavailableError(absl::StrCat(
          "this standby's copy of the store is ",
          lag == absl::InfiniteDuration()
              ? "not read yet"
              : absl::StrCat(Ms(lag), " old, past its bound of ", Ms(standby_read_bound_)),
          " (--standby-read-bound); ", refusal.message()));
    }
    bool leads = false;
    int64_t followed = store::kNoRevision;
    std::optional<absl::StatusOr<int64_t>> built;
    parts_.loop->Read([&] {  // on the loop: the follower and the read state are its own
      if (refusal_.ok()) {
        leads = true;
        return;
      }
      followed = follower_.mirror().rev();
      if (followed < at_least) {
        follower_.FollowSoon();
        return;
      }
      built = reads_.Refresh(follower_.mirror(), at_least, absl::Now());
    });
    if (leads) return api::AnswerStamp{"leader", -1, {}};  // took over meanwhile
    if (built.has_value()) {
      if (!built->ok()) {
        return absl::UnavailableError(absl::StrCat("this standby cannot answer from its copy (",
                                                   built->status().message(), "); ",
                                                   refusal.message()));
      }
      return api::AnswerStamp{"standby", **built, lag};
    }
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat("this standby has followed the store to revision ", followed,
                       " and the call needs revision ", at_least, " (", kMinRevisionKey,
                       "), not reached within ", Ms(kRevisionWait), "; ", refusal.message()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

const scheduler::SchedulerCore& CoreKeeper::ReadCore() const {
  if (refusal_.ok() || reads_.core() == nullptr) return *core_;
  return *reads_.core();
}

bool CoreKeeper::ReadFollowed(const std::function<void(const store::StoreMirror&)>& fn) {
  bool followed = false;
  parts_.loop->Read([&] {
    if (!led_by_lease_ || refusal_.ok()) return;
    fn(follower_.mirror());
    followed = true;
  });
  return followed;
}

void CoreKeeper::StepDown(const absl::Status& why) {
  parts_.loop->Call<bool>([&] {
    Refuse(why);
    return true;
  });
}

absl::Status CoreKeeper::Serving() const {
  absl::MutexLock lock(&refusal_mu_);
  return shared_refusal_;
}

void CoreKeeper::SetRefusal(absl::Status s) {
  refusal_ = s;
  absl::MutexLock lock(&refusal_mu_);
  shared_refusal_ = std::move(s);
}

absl::Status CoreKeeper::Rebuild(const records::StoreContents& contents,
                                 const records::TaskBatches& more) {
  ASSIGN_OR_RETURN(std::unique_ptr<scheduler::SchedulerCore> core,
                   scheduler::SchedulerCore::Create(core_config_));
  scheduler::Actions actions;
  RETURN_IF_ERROR(core->Restore(contents, absl::Now(), actions, more));
  parts_.committer->Resume();
  RETURN_IF_ERROR(parts_.committer->CommitSync(std::move(actions.batch)));
  SeedFairShare(*core, contents, *parts_.committer);
  core_ = std::move(core);
  if (on_records_) {
    store::StoreChanges all;
    all.changed.tokens = contents.tokens;
    all.changed.secrets = contents.secrets;
    on_records_(all, true);
  }
  parts_.commits->NewEpoch();
  SetRefusal(absl::OkStatus());
  return absl::OkStatus();
}

void CoreKeeper::Recover() {
  if (led_by_lease_) {
    follower_.Follow();
    PublishFollowed();
  } else {
    TryReload();
  }
}

void CoreKeeper::PublishFollowed() {
  if (!watch_.pending()) return;
  const absl::Time now = absl::Now();
  const store::StoreMirror& mirror = follower_.mirror();
  if (!reads_.Refresh(mirror, mirror.rev(), now).ok()) return;  // kept for the next tick
  parts_.hub->Publish(watch_.Take(reads_.core()->jobs(), now));
}

void CoreKeeper::TryReload() {
  if (reloading_ || absl::Now() < next_reload_) return;
  reloading_ = true;
  // The store is read on the writer thread, so that the loop keeps answering reads meanwhile.
  parts_.committer->SubmitRead([this](store::Store& s) {
    auto contents = std::make_shared<absl::StatusOr<records::StoreContents>>(s.Load());
    parts_.loop->Post([this, contents] {
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

void CoreKeeper::OnStoreFailure(const absl::Status& s) {
  if (!refusal_.ok()) return;
  if (led_by_lease_) {  // led by the leadership: it decides what comes next
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

void CoreKeeper::Refuse(const absl::Status& why) {
  SetRefusal(why);
  std::cerr << "master: " << why.message() << std::endl;
  // Watchers and agents start over against the reloaded state, or another leader.
  parts_.hub->CloseAll(why);
  parts_.agents->AbortAll();
}

}  // namespace paceline::masterd
