#include "masterd/retention_worker.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"

namespace paceline::masterd {

RetentionWorker::RetentionWorker(Cluster* cluster, RetentionOptions options)
    : cluster_(cluster), options_(std::move(options)), writer_(options_.archive_dir) {}

void RetentionWorker::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void RetentionWorker::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
}

void RetentionWorker::Loop() {
  absl::Time next_sample = absl::Now();
  while (!stop_.HasBeenNotified()) {
    if (absl::Now() >= next_sample) {
      SampleStore();
      next_sample = absl::Now() + options_.stats_period;
    }
    absl::StatusOr<size_t> retired = RunOnce();
    if (!retired.ok()) {
      std::cerr << "master: retention: " << retired.status() << "; trying again in "
                << absl::FormatDuration(options_.period) << std::endl;
    }
    const bool backlog = retired.ok() && *retired > 0;
    stop_.WaitForNotificationWithTimeout(backlog ? options_.pause : options_.period);
  }
}

absl::StatusOr<size_t> RetentionWorker::RunOnce() {
  if (!cluster_->Serving().ok()) return 0;  // a standby: the leader retires jobs
  std::vector<JobId> expired =
      cluster_->Read<std::vector<JobId>>([&](const scheduler::SchedulerCore& core) {
        return core.retention().Expired(absl::Now(), options_.batch_jobs);
      });
  if (expired.empty()) return 0;
  std::vector<records::JobHistory> jobs;
  absl::Status read;
  cluster_->ReadStore([&](store::Store& s) {
    size_t tasks = 0;
    for (JobId id : expired) {
      if (!jobs.empty() && tasks >= options_.batch_tasks) break;
      absl::StatusOr<std::optional<records::JobHistory>> h = s.ReadJob(id);
      if (!h.ok()) {
        read = h.status();
        return;
      }
      if (!h->has_value()) continue;  // deleted meanwhile
      tasks += (*h)->tasks.size();
      jobs.push_back(**std::move(h));
    }
  });
  auto fail = [&](const absl::Status& s) {
    absl::MutexLock lock(&mu_);
    ++facts_.failures;
    facts_.last_error = std::string(s.message());
    return s;
  };
  if (!read.ok()) return fail(WithContext(read, "reading jobs to archive"));
  if (jobs.empty()) return 0;
  absl::StatusOr<int64_t> bytes = writer_.Append(jobs, absl::Now());
  if (!bytes.ok()) return fail(WithContext(bytes.status(), "archiving"));
  std::vector<JobId> archived;
  archived.reserve(jobs.size());
  for (const records::JobHistory& h : jobs) archived.push_back(h.job.id);
  std::vector<JobId> purged;
  absl::Status s = cluster_->Mutate(
      [&](scheduler::SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        purged = core.job_control().PurgeExpired(archived, now, out);
        return absl::OkStatus();
      });
  if (!s.ok()) return fail(WithContext(s, "removing archived jobs from the store"));
  absl::MutexLock lock(&mu_);
  facts_.archived_jobs += purged.size();
  facts_.archived_bytes += static_cast<uint64_t>(*bytes);
  return purged.size();
}

void RetentionWorker::SampleStore() {
  absl::StatusOr<store::StoreStats> stats;
  cluster_->ReadStore([&](store::Store& s) { stats = s.Stats(); });
  absl::MutexLock lock(&mu_);
  if (stats.ok()) {
    facts_.store = *std::move(stats);
  } else {
    facts_.last_error = absl::StrCat("sampling the store: ", stats.status().message());
  }
}

api::RetentionFacts RetentionWorker::Facts() const {
  absl::MutexLock lock(&mu_);
  return facts_;
}

}  // namespace paceline::masterd
