#include "bench/inproc_fleet.h"

#include <pthread.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/status.h"
#include "masterd/agent_connection.h"

namespace paceline::bench {
namespace {

struct Shard;

// The master's AgentLink to one emulated host: what it sends is queued on the host's shard.
class QueueLink final : public api::AgentLink {
 public:
  QueueLink(Shard* shard, uint32_t host, uint64_t generation, const std::string& name)
      : shard_(shard), host_(host), generation_(generation), name_(name) {}
  const std::string& host() const override { return name_; }
  const std::string& address() const override { return address_; }
  void Send(v1::MasterMessage msg) override;
  void Close() override { closed_.store(true); }
  bool closed() const override { return closed_.load(); }
  void Abort() override;

 private:
  Shard* const shard_;
  const uint32_t host_;
  const uint64_t generation_;
  const std::string& name_;  // the FakeAgent's, which outlives the link
  const std::string address_ = "127.0.0.1";
  std::atomic<bool> closed_{false};
};

struct Host {
  std::unique_ptr<FakeAgent> agent;
  std::shared_ptr<QueueLink> link;
  std::unique_ptr<masterd::AgentConnection> conn;
  uint64_t generation = 0;  // of its current connection
};

struct Inbound {
  uint32_t host;
  uint64_t generation;  // of the connection it belongs to; stale once the host reconnected
  bool abort = false;   // the master ended the connection
  v1::MasterMessage msg;
};

struct Shard {
  absl::Mutex mu;
  std::vector<Inbound> inbox ABSL_GUARDED_BY(mu);
  bool stop ABSL_GUARDED_BY(mu) = false;
  std::vector<uint32_t> hosts;  // indexes into Impl::hosts
  std::thread thread;

  void Push(Inbound in) {
    absl::MutexLock lock(&mu);
    inbox.push_back(std::move(in));
  }
};

void QueueLink::Send(v1::MasterMessage msg) {
  if (closed()) return;
  shard_->Push(Inbound{host_, generation_, false, std::move(msg)});
}

void QueueLink::Abort() {
  if (!closed()) shard_->Push(Inbound{host_, generation_, true, {}});
}

}  // namespace

struct InProcessAgentFleet::Impl {
  InProcessFleetConfig config;
  std::shared_ptr<const FakeAgentOptions> options;
  std::unique_ptr<FleetStats> stats;
  std::vector<Host> hosts;
  std::vector<std::unique_ptr<Shard>> shards;
  masterd::Cluster* cluster = nullptr;
  absl::Duration heartbeat_interval;
  bool attached = false;

  Shard& ShardOf(uint32_t i) { return *shards[i % shards.size()]; }

  absl::Status Open(uint32_t i) {
    Host& h = hosts[i];
    h.link = std::make_shared<QueueLink>(&ShardOf(i), i, ++h.generation, h.agent->name());
    v1::AgentMessage first = h.agent->Register();
    absl::StatusOr<std::unique_ptr<masterd::AgentConnection>> conn =
        masterd::AgentConnection::Open(cluster, h.link, first, heartbeat_interval);
    if (!conn.ok()) {
      stats->StreamError(std::string(conn.status().message()));
      return conn.status();
    }
    h.conn = std::move(*conn);
    return absl::OkStatus();
  }

  void Close(uint32_t i) {
    Host& h = hosts[i];
    if (h.conn == nullptr) return;
    h.conn->Close();
    h.conn.reset();
    h.link.reset();
    if (h.agent->registered()) stats->Unregistered();
    h.agent->Disconnected();
  }

  void Deliver(Host& h, std::vector<v1::AgentMessage> out) {
    for (const v1::AgentMessage& m : out) {
      if (h.conn == nullptr) return;
      stats->Wrote(m);
      absl::Status s = h.conn->OnMessage(m);
      if (!s.ok()) stats->StreamError(std::string(s.message()));
    }
  }

  void Run(Shard& shard) {
    std::vector<Inbound> batch;
    absl::Time next_tick = absl::InfinitePast();
    while (true) {
      batch.clear();
      {
        absl::MutexLock lock(&shard.mu);
        auto ready = [&shard]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu) {
          return shard.stop || !shard.inbox.empty();
        };
        shard.mu.AwaitWithTimeout(absl::Condition(&ready), config.tick);
        if (shard.stop) return;
        std::swap(batch, shard.inbox);
      }
      absl::Time now = absl::Now();
      for (Inbound& in : batch) {
        Host& h = hosts[in.host];
        if (h.conn == nullptr || h.generation != in.generation) continue;  // a connection gone
        if (in.abort) {
          Close(in.host);
          (void)Open(in.host);  // registers again, as a real agent would
          stats->Reconnected();
          continue;
        }
        stats->Received(in.msg);
        bool was_registered = h.agent->registered();
        std::vector<v1::AgentMessage> out = h.agent->OnMessage(in.msg, now);
        if (!was_registered && h.agent->registered()) stats->Registered();
        Deliver(h, std::move(out));
      }
      if (now >= next_tick) {
        next_tick = now + config.tick;
        for (uint32_t i : shard.hosts) {
          Host& h = hosts[i];
          if (h.conn != nullptr && h.agent->NextDue() <= now) Deliver(h, h.agent->Due(now));
        }
      }
    }
  }
};

InProcessAgentFleet::InProcessAgentFleet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

InProcessAgentFleet::~InProcessAgentFleet() { Stop(); }

absl::StatusOr<std::unique_ptr<InProcessAgentFleet>> InProcessAgentFleet::Start(
    masterd::Cluster* cluster, absl::Duration heartbeat_interval, InProcessFleetConfig config) {
  if (config.hosts.empty()) return absl::InvalidArgumentError("hosts: none");
  if (config.threads < 1) return absl::InvalidArgumentError("threads: must be at least 1");
  if (config.register_threads < 1) {
    return absl::InvalidArgumentError("register_threads: must be at least 1");
  }
  auto impl = std::make_unique<Impl>();
  impl->stats = std::make_unique<FleetStats>(static_cast<int64_t>(config.hosts.size()),
                                             config.agent.observer);
  FakeAgentOptions options = config.agent;
  options.observer = impl->stats.get();
  impl->options = std::make_shared<const FakeAgentOptions>(std::move(options));
  impl->hosts.resize(config.hosts.size());
  for (size_t i = 0; i < config.hosts.size(); ++i) {
    impl->hosts[i].agent = std::make_unique<FakeAgent>(std::move(config.hosts[i]), impl->options);
  }
  config.hosts.clear();
  impl->config = std::move(config);
  for (int s = 0; s < impl->config.threads; ++s) impl->shards.push_back(std::make_unique<Shard>());
  for (uint32_t i = 0; i < impl->hosts.size(); ++i) impl->ShardOf(i).hosts.push_back(i);
  std::unique_ptr<InProcessAgentFleet> fleet(new InProcessAgentFleet(std::move(impl)));
  RETURN_IF_ERROR(fleet->Attach(cluster, heartbeat_interval));
  return fleet;
}

absl::Status InProcessAgentFleet::Attach(masterd::Cluster* cluster,
                                         absl::Duration heartbeat_interval) {
  Detach();
  Impl& m = *impl_;
  m.cluster = cluster;
  m.heartbeat_interval = heartbeat_interval;
  m.attached = true;
  std::atomic<uint32_t> next{0};
  absl::Mutex error_mu;
  absl::Status first_error;
  std::vector<std::thread> registrars;
  int n = std::min<int>(m.config.register_threads, static_cast<int>(m.hosts.size()));
  for (int t = 0; t < n; ++t) {
    registrars.emplace_back([&] {
      for (uint32_t i = next++; i < m.hosts.size(); i = next++) {
        absl::Status s = m.Open(i);
        if (!s.ok()) {
          absl::MutexLock lock(&error_mu);
          if (first_error.ok()) first_error = s;
        }
      }
    });
  }
  for (std::thread& t : registrars) t.join();
  for (auto& shard : m.shards) {
    {
      absl::MutexLock lock(&shard->mu);
      shard->stop = false;
    }
    Shard* s = shard.get();
    shard->thread = std::thread([&m, s] {
      pthread_setname_np(pthread_self(), "pl-fleet");
      m.Run(*s);
    });
  }
  return first_error;
}

void InProcessAgentFleet::Detach() {
  Impl& m = *impl_;
  if (!m.attached) return;
  m.attached = false;
  for (auto& shard : m.shards) {
    {
      absl::MutexLock lock(&shard->mu);
      shard->stop = true;
    }
    if (shard->thread.joinable()) shard->thread.join();
    absl::MutexLock lock(&shard->mu);
    shard->inbox.clear();
  }
  for (uint32_t i = 0; i < m.hosts.size(); ++i) m.Close(i);
}

FleetCounters InProcessAgentFleet::counters() const { return impl_->stats->Snapshot(); }

size_t InProcessAgentFleet::live_runs() const {
  size_t n = 0;
  for (const Host& h : impl_->hosts) n += h.agent->live_runs();
  return n;
}

size_t InProcessAgentFleet::heap_bytes() const {
  size_t n = 0;
  for (const Host& h : impl_->hosts) n += h.agent->HeapBytes();
  return n;
}

}  // namespace paceline::bench
