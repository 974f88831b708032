#pragma once
// PgLease: the leader lease of several masters sharing one PostgreSQL database (the `lease` row
// of schema.h). Times are the database's (now()), so the masters' clocks do not matter.
//
//   TryAcquire   takes the lease when it has expired (or was released, or is this holder's
//                own): the term grows by one and is returned; nullopt while another holder's
//                lease runs.
//   Renew        extends this term's lease; FAILED_PRECONDITION once the term is no longer the
//                lease's (another master took over after it expired).
//   Release      ends this term's lease at once (a clean shutdown: a standby takes over on its
//                next try instead of after the lease duration).
//   Read         who holds it, since when, and whether it still runs.
//
// The lease alone does not make writes safe — a paused leader wakes up believing it leads.
// The fence does: every commit of a leader calls paceline_fence(term) in its own transaction
// (PostgresStore::FenceWith), which fails once the term moved on.
//
// Uses a connection of its own, so that renewals never wait behind a long commit; reconnects
// by itself after the connection broke.
//
// Thread-safety: not thread-safe; one thread (the master's leadership loop) uses it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/postgres/pg_conn.h"

namespace paceline::store {

struct LeaseInfo {
  uint64_t term = 0;
  std::string holder;   // unique per master process
  std::string address;  // the holder's gRPC address, for redirects
  absl::Duration since_renewal = absl::InfiniteDuration();
  bool live = false;  // not expired
};

class PgLease {
 public:
  PgLease(std::string url, absl::Duration duration, absl::Duration connect_timeout)
      : url_(std::move(url)), duration_(duration), connect_timeout_(connect_timeout) {}

  absl::StatusOr<std::optional<uint64_t>> TryAcquire(const std::string& holder,
                                                     const std::string& address);
  absl::Status Renew(uint64_t term);
  absl::Status Release(uint64_t term);
  absl::StatusOr<LeaseInfo> Read();
  absl::Duration duration() const { return duration_; }

 private:
  absl::StatusOr<PgConn*> Conn();

  std::string url_;
  absl::Duration duration_;
  absl::Duration connect_timeout_;
  std::unique_ptr<PgConn> conn_;
};

}  // namespace paceline::store
