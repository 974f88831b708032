#pragma once
// Typed identifiers. Each id is a small value type over an integer so that a JobId cannot be
// passed where a HostId is expected, and so that maps keyed by ids stay cheap.
//
//   JobId    assigned by the master, never reused; printed as its decimal value.
//   PoolId   dense index of a pool in the pool tree (paths are the user-facing names).
//   HostId   dense index of a registered host (host names are the user-facing names).
//   TaskId   (job, instance): one instance of a job; printed "JOB/INSTANCE".
//   RunId    (task, run): one run of an instance; the run number grows on every restart;
//            printed "JOB/INSTANCE/RUN".
//
// Thread-safety: value types.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/hash/hash.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paceline {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.v_);
  }
  std::string ToString() const { return absl::StrCat(v_); }

 private:
  Rep v_{};
};

struct JobIdTag {};
struct PoolIdTag {};
struct HostIdTag {};
using JobId = StrongId<JobIdTag, uint64_t>;
using PoolId = StrongId<PoolIdTag, uint32_t>;
using HostId = StrongId<HostIdTag, uint32_t>;

struct TaskId {
  JobId job;
  uint32_t instance = 0;
  friend constexpr auto operator<=>(const TaskId&, const TaskId&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TaskId& t) {
    return H::combine(std::move(h), t.job, t.instance);
  }
  std::string ToString() const { return absl::StrCat(job.value(), "/", instance); }
  // Parses "JOB/INSTANCE"; nullopt when malformed.
  static std::optional<TaskId> Parse(absl::string_view text) {
    std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(text, '/');
    uint64_t job = 0;
    uint32_t instance = 0;
    if (!absl::SimpleAtoi(parts.first, &job) || !absl::SimpleAtoi(parts.second, &instance)) {
      return std::nullopt;
    }
    return TaskId{JobId(job), instance};
  }
};

struct RunId {
  TaskId task;
  uint32_t run = 0;
  friend constexpr auto operator<=>(const RunId&, const RunId&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const RunId& r) {
    return H::combine(std::move(h), r.task, r.run);
  }
  std::string ToString() const { return absl::StrCat(task.ToString(), "/", run); }
};

}  // namespace paceline
