#pragma once
// The retry policy of client calls, as pure parts that cli/rpc.h puts together:
//
//  - CallKind: every call site says whether its call is a read or a write.
//  - Classify: what one failed attempt allows.
//      a redirect (a master that does not lead names the leader, cli/leader_hint.h)
//                      → kRedirect, for reads and writes: the refusing master did nothing.
//      not reached (the channel never connected: connection refused, no answer, name not
//        resolved; nothing was sent)
//                      → kRetry, for reads and writes.
//      reached, then UNAVAILABLE or DEADLINE_EXCEEDED (the master went away, restarted, is
//        reloading, or did not answer in time)
//                      → kRetry for a read; kMaybeDone for a write, which is never sent again:
//                        it may have been carried out.
//      anything else   → kFinal: the master's answer.
//  - MasterRotation: which configured master to try next; each is tried once per round, at
//    once, before the next back-off.
//  - Backoff: 200 ms doubling to 2 s, each delay times a random factor in [0.8, 1.2].
//  - RetryLine: the one stderr line each retry prints, e.g.
//      paceline: master 127.0.0.1:5390 unavailable (connection refused); retrying in 0.4s
//      (attempt 3, 12s left)
//    (one line; "trying ADDR" when it moves to another master at once).
//
// Thread-safety: value types and pure functions; one Backoff and MasterRotation per command.

#include <optional>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace paceline::cli {

// Whether a call may change the master's state: it decides which failures are retried.
enum class CallKind {
  kRead,   // changes nothing (get, list, logs, watch): retried on any passing failure
  kWrite,  // create, kill, update...: retried only when the master surely did not carry it out
};

// One failed attempt of a call.
struct Failure {
  grpc::Status status;
  bool reached = false;               // sent on a connected channel (it may have been served)
  std::optional<std::string> leader;  // a redirect to the leader (cli/leader_hint.h)
};

enum class Verdict {
  kRedirect,   // a master that does not lead refused it, naming the leader
  kRetry,      // try again (maybe at another master)
  kMaybeDone,  // a write that failed after it was sent: report that it may have been made
  kFinal,      // the master's answer: report it
};

Verdict Classify(CallKind kind, const Failure& failure);

// Why an attempt failed, in a few words: "connection refused", "no answer", "connection lost",
// "not the leader, leader: HOST:PORT", or the status message.
std::string ReasonOf(const Failure& failure);

class MasterRotation {
 public:
  // `addrs` is not empty.
  explicit MasterRotation(std::vector<std::string> addrs);

  const std::string& current() const { return addrs_[at_]; }
  const std::vector<std::string>& all() const { return addrs_; }
  bool Listed(absl::string_view addr) const;
  // A new call or outage: every master may be tried once before the next back-off.
  void NewRound();
  // Makes `addr` the current master when it is listed.
  void MoveTo(absl::string_view addr);
  // After a failure at current(): moves to `leader` if it is listed and not yet tried in this
  // round, else to the next master not yet tried, and returns true (try it at once). When every
  // master failed in this round, starts a new one (at a listed `leader`, else at the next
  // master) and returns false: back off first.
  bool Next(const std::optional<std::string>& leader);

 private:
  std::vector<std::string> addrs_;
  size_t at_ = 0;
  std::vector<bool> tried_;
};

class Backoff {
 public:
  static constexpr absl::Duration kFirst = absl::Milliseconds(200);
  static constexpr absl::Duration kMax = absl::Seconds(2);

  // The next delay: kFirst, 2 kFirst, ... up to kMax, each times a random factor in [0.8, 1.2].
  absl::Duration Next();
  void Reset() { n_ = 0; }

 private:
  int n_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
};

// "paceline: master A unavailable (REASON); retrying in 0.4s (attempt 3, 12s left)" when `next`
// is `addr`, else "...; trying NEXT[ in 0.4s] (...)". `attempt` is the number of the attempt to
// come; `left` the time left for the call.
std::string RetryLine(absl::string_view addr, absl::string_view reason, absl::string_view next,
                      absl::Duration delay, int attempt, absl::Duration left);

}  // namespace paceline::cli
