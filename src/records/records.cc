#include "records/records.h"

namespace paceline::records {

bool WriteBatch::empty() const { return size() == 0 && !next_job_id.has_value(); }

size_t WriteBatch::size() const {
  return put_pools.size() + delete_pools.size() + put_jobs.size() + delete_jobs.size() +
         put_tasks.size() + delete_tasks.size() + events.size() + put_hosts.size();
}

absl::string_view UpdateStateName(UpdateState s) {
  switch (s) {
    case UpdateState::kRollingForward:
      return "ROLLING_FORWARD";
    case UpdateState::kRollingBack:
      return "ROLLING_BACK";
    case UpdateState::kSucceeded:
      return "SUCCEEDED";
    case UpdateState::kFailed:
      return "FAILED";
    case UpdateState::kRolledBack:
      return "ROLLED_BACK";
    case UpdateState::kAborted:
      return "ABORTED";
  }
  return "UNKNOWN";
}

absl::string_view MaintenanceName(HostMaintenance m) {
  switch (m) {
    case HostMaintenance::kUp:
      return "UP";
    case HostMaintenance::kDraining:
      return "DRAINING";
    case HostMaintenance::kDrained:
      return "DRAINED";
    case HostMaintenance::kDown:
      return "DOWN";
  }
  return "UNKNOWN";
}

bool IsActive(UpdateState s) {
  return s == UpdateState::kRollingForward || s == UpdateState::kRollingBack;
}

}  // namespace paceline::records
