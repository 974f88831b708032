#pragma once
// JobServiceImpl: the gRPC adapter for paceline.v1.JobService. Specs are parsed with the strict
// YAML parser; changes go through the Cluster (durable before answered); reads run on the event
// loop. Its calls are in four files: jobs and watches (job_service_impl.cc), rolling updates
// (job_service_impl_updates.cc), the archive of retired jobs (job_service_impl_archive.cc), the
// endpoints of services (job_service_impl_endpoints.cc).
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include <atomic>
#include <string>
#include <utility>

#include "api/access_control.h"
#include "api/backend.h"
#include "api/endpoints.h"
#include "api/secret_records.h"
#include "archive/archive_reader.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::api {

// What the endpoints calls need beyond the core: the hosts' addresses (null: none known), and
// the cluster's DNS domain (empty: the master serves no DNS, and jobs have no DNS name).
struct EndpointsSource {
  HostAddressFn address_of;
  std::string dns_domain;
};

class JobServiceImpl final : public v1::JobService::Service {
 public:
  // `secrets`: where the secrets a spec names must exist (CheckSecretRefs); null: nowhere.
  // `archive`: the master's archive of retired jobs (null: none, the archive calls answer
  // UNAVAILABLE).
  JobServiceImpl(Backend* cluster, AccessControl* access, const SecretRecords* secrets,
                 const archive::ArchiveReader* archive = nullptr, EndpointsSource endpoints = {})
      : cluster_(cluster),
        access_(access),
        secrets_(secrets),
        archive_(archive),
        endpoints_(std::move(endpoints)) {}

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

  // The endpoints of service and stateful jobs (job_service_impl_endpoints.cc). A watch holds
  // one gRPC thread and reads the job on the loop at most every 50 ms (after a change of its
  // tasks) and at least every 200 ms; at most kMaxEndpointWatches at once.
  static constexpr int kMaxEndpointWatches = 512;
  grpc::Status GetEndpoints(grpc::ServerContext* ctx, const v1::GetEndpointsRequest* req,
                            v1::JobEndpoints* resp) override;
  grpc::Status WatchEndpoints(grpc::ServerContext* ctx, const v1::WatchEndpointsRequest* req,
                              grpc::ServerWriter<v1::JobEndpoints>* writer) override;

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
  // Job `job`'s endpoints, read on the loop (the caller checked unless `check`), resolved and
  // converted.
  absl::StatusOr<v1::JobEndpoints> ReadEndpoints(grpc::ServerContext* ctx, uint64_t job,
                                                 bool check);

  Backend* const cluster_;
  AccessControl* const access_;
  const SecretRecords* const secrets_;
  const archive::ArchiveReader* const archive_;
  const EndpointsSource endpoints_;
  std::atomic<int> endpoint_watches_{0};
};

}  // namespace paceline::api
