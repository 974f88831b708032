#include "records/records.h"

namespace paceline::records {

bool WriteBatch::empty() const {
  return size() == 0 && !next_job_id.has_value() && !cluster_id.has_value() &&
         !prune_audit_before.has_value() && !prune_usage_before.has_value();
}

size_t WriteBatch::size() const {
  return put_pools.size() + delete_pools.size() + put_jobs.size() + delete_jobs.size() +
         put_tasks.size() + delete_tasks.size() + events.size() + put_hosts.size() +
         put_tokens.size() + delete_secrets.size() + put_secrets.size() + audit.size() +
         add_usage.size();
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

char EntryProgressCode(EntryProgress p) {
  switch (p) {
    case EntryProgress::kWaiting:
      return '.';
    case EntryProgress::kInFlight:
      return '>';
    case EntryProgress::kDone:
      return 'D';
    case EntryProgress::kFailed:
      return 'F';
  }
  return '?';
}

std::optional<EntryProgress> EntryProgressFromCode(char c) {
  switch (c) {
    case '.':
      return EntryProgress::kWaiting;
    case '>':
      return EntryProgress::kInFlight;
    case 'D':
      return EntryProgress::kDone;
    case 'F':
      return EntryProgress::kFailed;
    default:
      return std::nullopt;
  }
}

std::string ProgressCodes(const std::vector<EntryProgress>& progress) {
  std::string out;
  out.reserve(progress.size());
  for (EntryProgress p : progress) out.push_back(EntryProgressCode(p));
  return out;
}

bool IsActive(UpdateState s) {
  return s == UpdateState::kRollingForward || s == UpdateState::kRollingBack;
}

}  // namespace paceline::records
