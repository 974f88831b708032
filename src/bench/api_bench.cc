#include "bench/api_bench.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/local_master.h"
#include "common/status.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::bench {
namespace {

constexpr const char* kPool = "/bench";
constexpr const char* kJobSpec =
    "name: api-bench\ninstances: 1\ntask:\n  command: \"true\"\n"
    "  resources: {cpu: 0.01, memory: 8Mi}\n";

enum Call { kCreate = 0, kGet = 1, kQuery = 2, kNumCalls = 3 };
constexpr const char* kCallNames[kNumCalls] = {"CreateJob", "GetJob", "QueryJobs"};

struct ClientResult {
  std::vector<double> ms[kNumCalls];
  uint64_t errors[kNumCalls] = {};
  std::string first_error;
};

void Client(std::shared_ptr<grpc::Channel> channel, const std::string& token, absl::Time until,
            ClientResult& out) {
  auto stub = v1::JobService::NewStub(channel);
  uint64_t last_job = 0;
  auto timed = [&](Call call, const std::function<grpc::Status()>& fn) {
    absl::Time start = absl::Now();
    grpc::Status s = fn();
    double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    if (s.ok()) {
      out.ms[call].push_back(ms);
    } else {
      ++out.errors[call];
      if (out.first_error.empty()) {
        out.first_error = absl::StrCat(kCallNames[call], ": ", s.error_message());
      }
    }
  };
  while (absl::Now() < until) {
    timed(kCreate, [&] {
      v1::CreateJobRequest req;
      req.set_pool(kPool);
      req.set_spec_yaml(kJobSpec);
      v1::CreateJobResponse resp;
      grpc::Status s = stub->CreateJob(ClientContext(token).get(), req, &resp);
      if (s.ok()) last_job = resp.job_id();
      return s;
    });
    if (last_job != 0) {
      timed(kGet, [&] {
        v1::GetJobRequest req;
        req.set_job_id(last_job);
        v1::GetJobResponse resp;
        return stub->GetJob(ClientContext(token).get(), req, &resp);
      });
    }
    timed(kQuery, [&] {
      v1::QueryJobsRequest req;
      req.set_pool(kPool);
      req.set_page_size(20);
      v1::QueryJobsResponse resp;
      return stub->QueryJobs(ClientContext(token).get(), req, &resp);
    });
  }
}

}  // namespace

absl::StatusOr<ApiBenchReport> RunApiBench(const ApiBenchConfig& config) {
  if (config.clients < 1 || config.clients > 10000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--clients: ", config.clients, "; expected 1 to 10000"));
  }
  std::unique_ptr<LocalMaster> own;
  std::string addr = config.addr;
  std::string token = config.token;
  if (addr.empty()) {
    masterd::MasterConfig mc;
    mc.grpc_listen = HostPort{"127.0.0.1", 0};
    mc.http_listen = HostPort{"127.0.0.1", 0};
    ASSIGN_OR_RETURN(own, LocalMaster::Start(mc));
    addr = own->addr();
    token = own->token();
  }
  RETURN_IF_ERROR(CreateBenchPool(addr, token, kPool));

  // One connection per client, all connected before the clock starts.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < config.clients; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("paceline.bench_client", i);  // distinct arguments: a channel of its own
    channels.push_back(grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args));
    if (!channels.back()->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(10))) {
      return absl::UnavailableError(absl::StrCat("client ", i, " cannot connect to ", addr));
    }
  }
  std::vector<ClientResult> results(config.clients);
  std::vector<std::thread> threads;
  absl::Time start = absl::Now();
  absl::Time until = start + config.duration;
  for (int i = 0; i < config.clients; ++i) {
    threads.emplace_back(Client, channels[i], token, until, std::ref(results[i]));
  }
  for (std::thread& t : threads) t.join();
  ApiBenchReport report;
  report.config = config;
  report.wall = absl::Now() - start;
  double seconds = absl::ToDoubleSeconds(report.wall);
  for (int c = 0; c < kNumCalls; ++c) {
    std::vector<double> all;
    CallStats stats;
    stats.call = kCallNames[c];
    for (ClientResult& r : results) {
      all.insert(all.end(), r.ms[c].begin(), r.ms[c].end());
      stats.errors += r.errors[c];
      if (stats.first_error.empty()) stats.first_error = r.first_error;
    }
    stats.ok = all.size();
    stats.per_second = static_cast<double>(stats.ok) / seconds;
    stats.p50_ms = Percentile(all, 0.50);
    stats.p90_ms = Percentile(all, 0.90);
    stats.p99_ms = Percentile(all, 0.99);
    stats.max_ms = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
    report.total_per_second += stats.per_second;
    report.calls.push_back(std::move(stats));
  }
  return report;
}

nlohmann::json ToJson(const ApiBenchReport& r) {
  nlohmann::json calls = nlohmann::json::array();
  for (const CallStats& c : r.calls) {
    calls.push_back({{"call", c.call},
                     {"ok", c.ok},
                     {"errors", c.errors},
                     {"first_error", c.first_error},
                     {"per_second", c.per_second},
                     {"p50_ms", c.p50_ms},
                     {"p90_ms", c.p90_ms},
                     {"p99_ms", c.p99_ms},
                     {"max_ms", c.max_ms}});
  }
  return {
      {"benchmark", "api"},
      {"clients", r.config.clients},
      {"duration_s", absl::ToDoubleSeconds(r.config.duration)},
      {"master", r.config.addr.empty() ? "in-process, SQLite store in a temp dir" : r.config.addr},
      {"wall_s", absl::ToDoubleSeconds(r.wall)},
      {"total_per_second", r.total_per_second},
      {"calls", calls}};
}

}  // namespace paceline::bench
