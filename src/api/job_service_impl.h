#pragma once
// JobServiceImpl: the gRPC adapter for paceline.v1.JobService. Specs are parsed with the strict
// YAML parser; changes go through the Cluster (durable before answered); reads run on the event
// loop. Its calls are in three files: jobs and watches (job_service_impl.cc), rolling updates
// (job_service_impl_updates.cc), the archive of retired jobs (job_service_impl_archive.cc).
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include "api/access_control.h"
#include "api/backend.h"
#include "api/secret_records.h"
#include "archive/archive_reader.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::api {

class JobServiceImpl final : public v1::JobService::Service {
 public:
  // `secrets`: where the secrets a spec names must exist (CheckSecretRefs); null: nowhere.
  // `archive`: the master's archive of retired jobs (null: none, the archive calls answer
  // UNAVAILABLE).
  JobServiceImpl(Backend* cluster, AccessControl* access, const SecretRecords* secrets,
                 const archive::ArchiveReader* archive = nullptr)
      : cluster_(cluster), access_(access), secrets_(secrets), archive_(archive) {}

  grpc::Status CreateJob(grpc::ServerContext* ctx, const v1::CreateJobRequest* req,
                         v1::CreateJobResponse* resp) override;
  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                      v1::GetJobResponse* resp) override;
  grpc::Status QueryJobs(grpc::ServerContext* ctx, const v1::QueryJobsRequest* req,
                         v1::QueryJobsResponse* resp) override;
  grpc::Status KillJob(grpc::ServerContext* ctx, const v1::KillJobRequest* req,
                       v1::KillJobResponse* resp) override;
  grpc::Status DeleteJob(grpc::ServerContext* ctx, const v1::DeleteJobRequest* req,
                         v1::DeleteJobResponse* resp) override;
  grpc::Status RestartJob(grpc::ServerContext* ctx, const v1::RestartJobRequest* req,
                          v1::RestartJobResponse* resp) override;
  // The archive of retired jobs (job_service_impl_archive.cc).
  grpc::Status GetArchivedJob(grpc::ServerContext* ctx, const v1::GetArchivedJobRequest* req,
                              v1::GetArchivedJobResponse* resp) override;
  grpc::Status QueryArchive(grpc::ServerContext* ctx, const v1::QueryArchiveRequest* req,
                            v1::QueryArchiveResponse* resp) override;
  // Holds one gRPC thread per watcher until the client cancels or the master stops.
  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req,
                     grpc::ServerWriter<v1::WatchEvent>* writer) override;

  // Rolling updates (job_service_impl_updates.cc).
  grpc::Status UpdateJob(grpc::ServerContext* ctx, const v1::UpdateJobRequest* req,
                         v1::UpdateJobResponse* resp) override;
  grpc::Status GetUpdate(grpc::ServerContext* ctx, const v1::GetUpdateRequest* req,
                         v1::GetUpdateResponse* resp) override;
  grpc::Status ListUpdates(grpc::ServerContext* ctx, const v1::ListUpdatesRequest* req,
                           v1::ListUpdatesResponse* resp) override;
  grpc::Status PauseUpdate(grpc::ServerContext* ctx, const v1::PauseUpdateRequest* req,
                           v1::PauseUpdateResponse* resp) override;
  grpc::Status ResumeUpdate(grpc::ServerContext* ctx, const v1::ResumeUpdateRequest* req,
                            v1::ResumeUpdateResponse* resp) override;
  grpc::Status AbortUpdate(grpc::ServerContext* ctx, const v1::AbortUpdateRequest* req,
                           v1::AbortUpdateResponse* resp) override;
  grpc::Status RollbackJob(grpc::ServerContext* ctx, const v1::RollbackJobRequest* req,
                           v1::RollbackJobResponse* resp) override;

 private:
  grpc::Status SetPaused(grpc::ServerContext* ctx, uint64_t job, bool paused);

  Backend* const cluster_;
  AccessControl* const access_;
  const SecretRecords* const secrets_;
  const archive::ArchiveReader* const archive_;
};

}  // namespace paceline::api
