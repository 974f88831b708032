#pragma once
// Leadership: which of several masters on one PostgreSQL database leads (docs/operations.md,
// "High availability"). A thread of its own runs, every `lease / 5`:
//
//   standby  TryAcquire the lease. Won: fence the store by the new term, have the cluster
//            rebuild from the store and serve (CoreKeeper::BecomeLeader); the agents, which the
//            standbys turned away, register here and the tasks are adopted as after a restart.
//            Lost: remember who leads, so that every call answers UNAVAILABLE naming the
//            leader ("... leader: HOST:PORT") and clients and agents go there.
//   leader   Renew the lease. When the renewal fails because another master took the lease,
//            or has not succeeded for `lease - lease / 5` (the database is unreachable, or
//            this process was paused), step down: the cluster stops serving. When the cluster
//            stopped by itself (a commit refused by the fence or the database), take the lease
//            again (it is still ours unless it expired) and lead under a new term: a reload.
//
// The fence, not the lease, keeps a deposed leader from writing (store/postgres/pg_lease.h).
// On Stop() a leader releases the lease so that a standby takes over at once.
//
// Thread-safety: Start/Stop from one thread; status() from any.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "masterd/core_keeper.h"
#include "store/postgres/pg_lease.h"
#include "store/postgres/postgres_store.h"

namespace paceline::masterd {

struct LeadershipStatus {
  bool leader = false;
  uint64_t term = 0;                                    // the lease's term as last seen
  std::string leader_address;                           // empty while nobody leads
  absl::Duration lease_age = absl::InfiniteDuration();  // since the leader's last renewal
};

class Leadership {
 public:
  // `store` and `keeper` (the Cluster's) must outlive this object. `holder` is unique per process;
  // `address` is where clients reach this master's gRPC API.
  Leadership(std::unique_ptr<store::PgLease> lease, store::PostgresStore* store, CoreKeeper* keeper,
             std::string holder, std::string address);
  ~Leadership();
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  void Start();
  void Stop();
  LeadershipStatus status() const;

 private:
  void Loop();
  void Tick();
  void Lead(uint64_t term);
  void Follow(const absl::Status& why);

  std::unique_ptr<store::PgLease> lease_;
  store::PostgresStore* const store_;
  CoreKeeper* const keeper_;
  const std::string holder_;
  const std::string address_;
  const absl::Duration period_;

  // Leadership thread only.
  bool leading_ = false;
  uint64_t term_ = 0;
  absl::Time last_renewal_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  LeadershipStatus status_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace paceline::masterd
