#include "bench/local_master.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/file_util.h"
#include "agent/host/proc_stat.h"
#include "common/status.h"
#include "common/version.h"
#include "masterd/cluster.h"
#include "paceline/v1/access.grpc.pb.h"
#include "paceline/v1/pool.grpc.pb.h"

namespace paceline::bench {

absl::StatusOr<std::unique_ptr<LocalMaster>> LocalMaster::Start(masterd::MasterConfig config) {
  auto m = std::unique_ptr<LocalMaster>(new LocalMaster());
  // Loopback only: the benchmarks' clients and emulated agents speak plain text.
  config.insecure_loopback = true;
  if (config.data_dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "paceline-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::UnavailableError("cannot create a temporary data directory");
    }
    config.data_dir = pattern;
    m->own_dir_ = true;
  }
  m->config_ = config;
  ASSIGN_OR_RETURN(m->master_, masterd::Master::Start(config));
  RETURN_IF_ERROR(m->WaitServing());
  ASSIGN_OR_RETURN(m->token_, masterd::LoadOrCreateToken(m->master_->endpoints().token_file));
  ASSIGN_OR_RETURN(m->agent_token_,
                   masterd::LoadOrCreateToken(m->master_->endpoints().agent_token_file));
  return m;
}

LocalMaster::~LocalMaster() { Stop(); }

absl::StatusOr<absl::Duration> LocalMaster::Restart() {
  absl::StatusOr<HostPort> bound = ParseHostPort(master_->endpoints().grpc);
  if (bound.ok()) config_.grpc_listen = *bound;
  master_->Shutdown();
  master_.reset();
  absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(master_, masterd::Master::Start(config_));
  RETURN_IF_ERROR(WaitServing());
  return absl::Now() - start;
}

absl::Status LocalMaster::WaitServing() {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (true) {
    absl::Status serving = master_->cluster()->keeper().Serving();
    if (serving.ok()) return serving;
    if (absl::Now() > deadline) return serving;  // e.g. it never took the lease
    absl::SleepFor(absl::Milliseconds(5));
  }
}

void LocalMaster::Stop() {
  if (master_ != nullptr) {
    master_->Shutdown();
    master_.reset();
  }
  if (own_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(config_.data_dir, ec);
    own_dir_ = false;
  }
}

std::unique_ptr<grpc::ClientContext> ClientContext(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_wait_for_ready(true);  // a connection hiccup waits, it is not a burst of errors
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return ctx;
}

absl::Status CreateBenchPool(const std::string& addr, const std::string& token,
                             const std::string& path) {
  auto stub =
      v1::PoolService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  v1::CreatePoolRequest req;
  req.set_path(path);
  req.set_spec_yaml("resources:\n  cpu: {reservation: 0, limit: 100000000}\n");
  v1::CreatePoolResponse resp;
  grpc::Status s = stub->CreatePool(ClientContext(token).get(), req, &resp);
  if (!s.ok() && s.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
    return absl::UnavailableError(absl::StrCat("creating pool ", path, ": ", s.error_message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CreateAgentToken(const std::string& addr, const std::string& token) {
  auto stub =
      v1::AccessService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  v1::CreateTokenRequest req;
  req.set_user("*");
  req.set_role("agent");
  req.set_name("emulated agents");
  req.set_expires_in_seconds(24 * 3600);
  v1::CreateTokenResponse resp;
  grpc::Status s = stub->CreateToken(ClientContext(token).get(), req, &resp);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("creating an agent token: ", s.error_message()));
  }
  return resp.token();
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

int64_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view l = line;
    if (!absl::ConsumePrefix(&l, "VmRSS:")) continue;
    l = absl::StripAsciiWhitespace(l);
    absl::ConsumeSuffix(&l, "kB");
    int64_t kb = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(l), &kb)) return kb * 1024;
  }
  return 0;
}

nlohmann::json MachineJson() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(cpuinfo, line);) {
    absl::string_view l = line;
    if (absl::ConsumePrefix(&l, "model name")) {
      size_t colon = l.find(':');
      if (colon != absl::string_view::npos)
        model = std::string(absl::StripAsciiWhitespace(l.substr(colon + 1)));
    }
  }
  int64_t memory_bytes = 0;
  absl::StatusOr<std::string> meminfo = agent::ReadFile("/proc/meminfo");
  if (meminfo.ok()) {
    absl::StatusOr<agent::MemInfo> m = agent::ParseMeminfo(*meminfo);
    if (m.ok()) memory_bytes = m->total_bytes;
  }
  struct utsname u = {};
  ::uname(&u);
  return {{"cpus", std::thread::hardware_concurrency()},
          {"cpu_model", model},
          {"memory_bytes", memory_bytes},
          {"kernel", absl::StrCat(u.sysname, " ", u.release)},
          {"version", std::string(Version())},
          {"commit", std::string(Commit())},
          {"date", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone())}};
}

}  // namespace paceline::bench
