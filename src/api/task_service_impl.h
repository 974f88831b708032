#pragma once
// TaskServiceImpl: the gRPC adapter for paceline.v1.TaskService: a job's tasks as the core has
// them (reads run on the event loop), a task's events from the store, a run's logs from its
// host's agent, kills and volume releases (durable before answered), and exec sessions
// (task_exec.cc: routed to the run's agent, never through the event loop after their start).
//
// Thread-safety: handlers run on gRPC threads; all state lives in the Cluster.

#include <functional>
#include <string>

#include "api/access_control.h"
#include "api/backend.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::api {

class TaskServiceImpl final : public v1::TaskService::Service {
 public:
  // The IP address of a host's agent as the master sees it ("" when unknown): TaskInfo.address.
  using AddressOf = std::function<std::string(const std::string& host)>;
  TaskServiceImpl(Backend* cluster, AccessControl* access, AddressOf address_of = nullptr)
      : cluster_(cluster), access_(access), address_of_(std::move(address_of)) {}

  grpc::Status ListTasks(grpc::ServerContext* ctx, const v1::ListTasksRequest* req,
                         v1::ListTasksResponse* resp) override;
  grpc::Status GetTask(grpc::ServerContext* ctx, const v1::GetTaskRequest* req,
                       v1::GetTaskResponse* resp) override;
  grpc::Status ListTaskEvents(grpc::ServerContext* ctx, const v1::ListTaskEventsRequest* req,
                              v1::ListTaskEventsResponse* resp) override;
  grpc::Status GetTaskLogs(grpc::ServerContext* ctx, const v1::GetTaskLogsRequest* req,
                           v1::GetTaskLogsResponse* resp) override;
  grpc::Status KillTask(grpc::ServerContext* ctx, const v1::KillTaskRequest* req,
                        v1::KillTaskResponse* resp) override;
  grpc::Status ReleaseVolume(grpc::ServerContext* ctx, const v1::ReleaseVolumeRequest* req,
                             v1::ReleaseVolumeResponse* resp) override;
  // A command in a running task's environment (task_exec.cc).
  grpc::Status Exec(grpc::ServerContext* ctx,
                    grpc::ServerReaderWriter<v1::ExecResponse, v1::ExecRequest>* stream) override;

 private:
  Backend* const cluster_;
  AccessControl* const access_;
  const AddressOf address_of_;
};

}  // namespace paceline::api
