#include "bench/list_prober.h"

#include <utility>

#include <grpcpp/grpcpp.h>

#include "absl/time/clock.h"
#include "bench/local_master.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::bench {

ListProber::ListProber(std::string addr, std::string token, std::string pool,
                       absl::Duration interval)
    : addr_(std::move(addr)),
      token_(std::move(token)),
      pool_(std::move(pool)),
      interval_(interval),
      thread_([this] { Run(); }) {}

ListProber::~ListProber() { Stop(); }

ListLatencies ListProber::Stop() {
  if (!thread_.joinable()) return {};
  stop_.Notify();
  thread_.join();
  return std::move(out_);
}

void ListProber::Run() {
  grpc::ChannelArguments args;
  args.SetInt("paceline.bench_lister", 1);  // a connection of its own
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(addr_, grpc::InsecureChannelCredentials(), args);
  auto jobs_stub = v1::JobService::NewStub(channel);
  auto tasks_stub = v1::TaskService::NewStub(channel);
  std::vector<uint64_t> jobs;  // named by the last page
  size_t next_job = 0;
  bool jobs_turn = true;
  // A call sent at `sent` answered `s` just now: its latency goes to `into`, or its error is
  // counted. True if it succeeded.
  auto answered = [&](const grpc::Status& s, absl::Time sent, std::vector<double>& into) {
    if (s.ok()) {
      into.push_back(absl::ToDoubleMilliseconds(absl::Now() - sent));
    } else if (out_.errors++ == 0) {
      out_.first_error = s.error_message();
    }
    return s.ok();
  };
  while (!stop_.WaitForNotificationWithTimeout(interval_)) {
    const absl::Time sent = absl::Now();
    if (jobs_turn || jobs.empty()) {
      v1::QueryJobsRequest req;
      req.set_pool(pool_);
      v1::QueryJobsResponse resp;
      if (!answered(jobs_stub->QueryJobs(ClientContext(token_).get(), req, &resp), sent,
                    out_.job_list_ms)) {
        continue;
      }
      jobs.clear();
      for (const v1::JobSummary& j : resp.jobs()) jobs.push_back(j.id());
    } else {
      v1::ListTasksRequest req;
      req.set_job_id(jobs[next_job++ % jobs.size()]);
      v1::ListTasksResponse resp;
      if (!answered(tasks_stub->ListTasks(ClientContext(token_).get(), req, &resp), sent,
                    out_.task_list_ms)) {
        continue;
      }
    }
    jobs_turn = !jobs_turn;
  }
}

}  // namespace paceline::bench
