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

absl::StatusOr<RetiredBatch> RetireBatch(const RetirePorts& ports, archive::ArchiveWriter& writer,
                                         size_t batch_jobs, size_t batch_tasks,
                                         absl::Time archived_at) {
  RetiredBatch batch;
  std::vector<JobId> expired = ports.expired(batch_jobs);
  if (expired.empty()) return batch;
  std::vector<records::JobHistory> jobs;
  absl::Status read;
  ports.read_store([&](store::Store& s) {
    size_t tasks = 0;
    for (JobId id : expired) {
      if (!jobs.empty() && tasks >= batch_tasks) break;
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
  RETURN_IF_ERROR(WithContext(read, "reading jobs to archive"));
  if (jobs.empty()) return batch;
  absl::StatusOr<int64_t> bytes = writer.Append(jobs, archived_at);
  RETURN_IF_ERROR(WithContext(bytes.status(), "archiving"));
  batch.bytes = *bytes;
  std::vector<JobId> archived;
  archived.reserve(jobs.size());
  for (const records::JobHistory& h : jobs) archived.push_back(h.job.id);
  absl::StatusOr<std::vector<JobId>> purged = ports.purge(archived);
  RETURN_IF_ERROR(WithContext(purged.status(), "removing archived jobs from the store"));
  batch.jobs = purged->size();
  for (const records::JobHistory& h : jobs) batch.tasks += h.tasks.size();
  return batch;
}

absl::StatusOr<size_t> RetentionWorker::RunOnce() {
  if (!cluster_->keeper().Serving().ok()) return 0;  // a standby: the leader retires jobs
  RetirePorts ports;
  ports.expired = [&](size_t limit) {
    return cluster_->Read<std::vector<JobId>>([&](const scheduler::SchedulerCore& core) {
      return core.retention().Expired(absl::Now(), limit);
    });
  };
  ports.read_store = [&](const std::function<void(store::Store&)>& read) {
    cluster_->committer().RunOnWriter(read);
  };
  ports.purge = [&](const std::vector<JobId>& jobs) -> absl::StatusOr<std::vector<JobId>> {
    std::vector<JobId> purged;
    RETURN_IF_ERROR(cluster_->Mutate(
        [&](scheduler::SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
          purged = core.job_control().PurgeExpired(jobs, now, out);
          return absl::OkStatus();
        }));
    return purged;
  };
  absl::StatusOr<RetiredBatch> batch =
      RetireBatch(ports, writer_, options_.batch_jobs, options_.batch_tasks, absl::Now());
  absl::MutexLock lock(&mu_);
  if (!batch.ok()) {
    ++facts_.failures;
    facts_.last_error = std::string(batch.status().message());
    return batch.status();
  }
  facts_.archived_jobs += batch->jobs;
  facts_.archived_bytes += static_cast<uint64_t>(batch->bytes);
  return batch->jobs;
}

void RetentionWorker::SampleStore() {
  absl::StatusOr<store::StoreStats> stats;
  if (options_.stats) {
    stats = options_.stats();
  } else {
    cluster_->committer().RunOnWriter([&](store::Store& s) { stats = s.Stats(); });
  }
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
