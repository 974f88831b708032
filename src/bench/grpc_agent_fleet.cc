#include "bench/grpc_agent_fleet.h"

#include <pthread.h>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/grpc_host_stream.h"
#include "common/status.h"

namespace paceline::bench {

std::vector<FakeHostSpec> UniformHosts(int n, absl::string_view prefix,
                                       const v1::Resources& capacity,
                                       std::vector<std::pair<std::string, std::string>> labels) {
  std::vector<FakeHostSpec> hosts(n);
  for (int i = 0; i < n; ++i) {
    hosts[i].name = absl::StrFormat("%s-%05d", prefix, i);
    hosts[i].capacity = capacity;
    hosts[i].labels = labels;
  }
  return hosts;
}

v1::Resources Capacity(int64_t cpu_milli, int64_t memory_bytes) {
  v1::Resources r;
  r.set_cpu_milli(cpu_milli);
  r.set_memory_bytes(memory_bytes);
  return r;
}

namespace {

// One thread, its completion queue and its share of the hosts.
struct Shard {
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<HostStream>> hosts;
  std::thread thread;
};

absl::Status Validate(const GrpcFleetConfig& c) {
  if (c.master_addr.empty()) return absl::InvalidArgumentError("master_addr: empty");
  if (c.hosts.empty()) return absl::InvalidArgumentError("hosts: none; give at least one");
  if (c.threads < 1 || c.threads > 64) {
    return absl::InvalidArgumentError(absl::StrCat("threads: ", c.threads, "; expected 1 to 64"));
  }
  if (c.streams_per_channel < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("streams_per_channel: ", c.streams_per_channel, "; expected at least 1"));
  }
  if (c.tick <= absl::ZeroDuration() || c.max_backoff <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("tick and max_backoff must be positive");
  }
  absl::flat_hash_set<absl::string_view> names;
  for (const FakeHostSpec& h : c.hosts) {
    if (h.name.empty()) return absl::InvalidArgumentError("hosts: a host without a name");
    if (!names.insert(h.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("hosts: '", h.name, "' twice; host names must be unique"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

struct GrpcAgentFleet::Impl {
  absl::Duration tick;
  std::unique_ptr<FleetStats> stats;
  HostStreamOptions stream_options;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::AgentService::Stub>> stubs;
  std::vector<std::unique_ptr<Shard>> shards;
  std::atomic<bool> stopping{false};
  bool joined = false;

  void Run(Shard& shard);
};

// The loop of one shard: completions as they come, timers every tick; on Stop, cancels every
// stream, and shuts the queue down once none has an operation in flight.
void GrpcAgentFleet::Impl::Run(Shard& shard) {
  bool cancelled = false;
  bool shut_down = false;
  absl::Time next_tick = absl::Now();
  while (true) {
    void* tag = nullptr;
    bool ok = false;
    // Never a deadline in the distant past: gRPC does not convert those faithfully.
    const auto deadline = shut_down ? std::chrono::system_clock::time_point::max()
                                    : absl::ToChronoTime(std::max(next_tick, absl::Now()));
    grpc::CompletionQueue::NextStatus got = shard.cq.AsyncNext(&tag, &ok, deadline);
    if (got == grpc::CompletionQueue::SHUTDOWN) return;
    const absl::Time now = absl::Now();
    if (got == grpc::CompletionQueue::GOT_EVENT) {
      auto* t = static_cast<HostStream::Tag*>(tag);
      t->stream->OnEvent(t->op, ok, now);
    }
    if (shut_down || now < next_tick) continue;
    next_tick = now + tick;
    if (!stopping.load(std::memory_order_acquire)) {
      for (const std::unique_ptr<HostStream>& h : shard.hosts) h->Tick(now);
      continue;
    }
    if (!cancelled) {
      for (const std::unique_ptr<HostStream>& h : shard.hosts) h->Cancel();
      cancelled = true;
    }
    bool idle = true;
    for (const std::unique_ptr<HostStream>& h : shard.hosts) idle = idle && h->idle();
    if (idle) {
      shard.cq.Shutdown();
      shut_down = true;
    }
  }
}

absl::StatusOr<std::unique_ptr<GrpcAgentFleet>> GrpcAgentFleet::Start(GrpcFleetConfig config) {
  RETURN_IF_ERROR(Validate(config));
  auto impl = std::make_unique<Impl>();
  const int n = static_cast<int>(config.hosts.size());
  impl->tick = config.tick;
  impl->stats = std::make_unique<FleetStats>(n, config.agent.observer);
  impl->stream_options.token = config.token;
  impl->stream_options.max_backoff = config.max_backoff;
  auto agent_options = std::make_shared<FakeAgentOptions>(config.agent);
  agent_options->observer = impl->stats.get();

  const int channels = (n + config.streams_per_channel - 1) / config.streams_per_channel;
  for (int c = 0; c < channels; ++c) {
    grpc::ChannelArguments args;
    // One TCP connection per channel: a channel of its own subchannels, and arguments that
    // differ from every other channel's.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("paceline.fleet_channel", c);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                static_cast<int>(absl::ToInt64Milliseconds(config.max_backoff)));
    impl->channels.push_back(
        grpc::CreateCustomChannel(config.master_addr, grpc::InsecureChannelCredentials(), args));
    impl->stubs.push_back(v1::AgentService::NewStub(impl->channels.back()));
  }
  for (int t = 0; t < config.threads; ++t) impl->shards.push_back(std::make_unique<Shard>());
  for (int i = 0; i < n; ++i) {
    Shard& shard = *impl->shards[i % config.threads];
    shard.hosts.push_back(
        std::make_unique<HostStream>(FakeAgent(std::move(config.hosts[i]), agent_options),
                                     impl->stubs[i / config.streams_per_channel].get(), &shard.cq,
                                     &impl->stream_options, impl->stats.get()));
  }
  Impl* raw = impl.get();
  for (const std::unique_ptr<Shard>& shard : impl->shards) {
    Shard* s = shard.get();
    s->thread = std::thread([raw, s] {
      pthread_setname_np(pthread_self(), "pl-fleet");
      raw->Run(*s);
    });
  }
  return std::unique_ptr<GrpcAgentFleet>(new GrpcAgentFleet(std::move(impl)));
}

GrpcAgentFleet::GrpcAgentFleet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcAgentFleet::~GrpcAgentFleet() { Stop(); }

absl::Status GrpcAgentFleet::WaitRegistered(absl::Duration timeout) {
  return impl_->stats->WaitRegistered(timeout);
}

void GrpcAgentFleet::Stop() {
  if (impl_->joined) return;
  impl_->stopping.store(true, std::memory_order_release);
  for (const std::unique_ptr<Shard>& shard : impl_->shards) shard->thread.join();
  impl_->joined = true;
}

FleetCounters GrpcAgentFleet::counters() const { return impl_->stats->Snapshot(); }

}  // namespace paceline::bench
