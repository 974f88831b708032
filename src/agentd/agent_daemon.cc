#include "agentd/agent_daemon.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "agent/host/usage_sampler.h"
#include "agent/launch/identity_hook.h"
#include "agent/task_runtime.h"
#include "agentd/certificate_renewer.h"
#include "agentd/exec_sessions.h"
#include "common/leader_hint.h"
#include "common/status.h"
#include "common/version.h"
#include "image/image_store.h"
#include "paceline/v1/host.grpc.pb.h"
#include "wire/agent_runtime.h"
#include "wire/core.h"
#include "wire/stream_batch.h"

namespace paceline::agentd {
namespace {

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::MasterMessage>;

// How soon to ask again after a master refused the stream without naming a leader to follow.
constexpr absl::Duration kRefusedRetry = absl::Milliseconds(250);
// Status updates go to the master at most this often: what a burst of task ends records in that
// time goes as one batch, with one fsync of the outbox here and one commit there, instead of one
// each per loop turn.
constexpr absl::Duration kUpdateInterval = absl::Milliseconds(5);
// In a burst of launches, the runtime handles what happened (runs that ended) after this many:
// the supervisors and kept cgroups of the runs that ended serve the next launches, instead of a
// new supervisor and a new cgroup for every launch of the burst.
constexpr int kLaunchesPerTurn = 16;

}  // namespace

struct AgentDaemon::Impl {
  AgentDaemonConfig config;
  std::unique_ptr<agent::TaskRuntime> runtime;
  // `paceline task exec` sessions (after the runtime: they end first).
  std::unique_ptr<ExecSessions> exec;
  // The masters to try, in turn (several masters: only the leader accepts the stream), and
  // any leader a refusal named that was not among them.
  std::vector<std::string> masters;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  grpc::ChannelArguments channel_args;
  size_t current = 0;
  // Whether the last stream ended in a redirect that was followed at once: a second one in a
  // row is not (two masters naming each other during an election).
  bool redirected = false;
  // The master last found dead (unreachable, or its stream broke without a word): a standby
  // names it as the leader until a new leader takes the lease, and is not followed there.
  std::string dead;
  const std::string& master() const { return masters[current]; }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  void AddMaster(std::string addr) {
    channels.push_back(grpc::CreateCustomChannel(addr, credentials, channel_args));
    masters.push_back(std::move(addr));
  }
  // The next master, after this one refused the stream or could not be reached.
  void NextMaster() { current = (current + 1) % masters.size(); }
  // Makes `leader` the master to try next, adding it when it is not known yet.
  void FollowLeader(const std::string& leader) {
    auto it = std::find(masters.begin(), masters.end(), leader);
    if (it == masters.end()) {
      AddMaster(leader);
      it = masters.end() - 1;
    }
    current = static_cast<size_t>(it - masters.begin());
  }

  // The current connection (loop thread), and what its reader thread hands over.
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<Stream> stream;
  std::thread reader;
  absl::Mutex mu;
  std::deque<v1::MasterMessage> inbox ABSL_GUARDED_BY(mu);
  bool reader_done ABSL_GUARDED_BY(mu) = false;

  bool connected = false;
  bool master_batches = false;  // the master reads AgentMessage.batch (its `registered` said so)
  uint64_t last_sent = 0;       // highest seq sent on this connection
  absl::Time next_updates = absl::InfinitePast();  // when updates may go again
  absl::Duration heartbeat_interval = defaults::kHeartbeatInterval;
  absl::Time next_heartbeat = absl::InfinitePast();
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Time next_attempt = absl::InfinitePast();
  bool announced = false;
  agent::UsageSampler usage;
  absl::Time next_usage = absl::InfinitePast();
  std::optional<std::string> sent_images;  // the inventory last sent on this connection
  uint64_t sent_gpu_health = 0;            // the GPU health version last sent on it

  std::unique_ptr<AgentMetrics> metrics;
  absl::Time next_metrics = absl::InfinitePast();

  void PublishMetricsIfDue(absl::Time now) {
    if (metrics == nullptr || now < next_metrics) return;
    metrics->Publish(SnapshotOf(*runtime, connected));
    next_metrics = now + absl::Seconds(1);
  }

  // From the renewer's thread: a certificate to present.
  std::optional<Credentials> renewed ABSL_GUARDED_BY(mu);

  std::shared_ptr<grpc::ChannelCredentials> MakeCredentials() const {
    if (config.ca_pem.empty()) return grpc::InsecureChannelCredentials();
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = config.ca_pem;
    tls.pem_cert_chain = config.cert_pem;
    tls.pem_private_key = config.key_pem;
    return grpc::SslCredentials(tls);
  }

  // Loop thread: connects with a certificate the renewer handed over, to the same master.
  void PresentRenewed(absl::Time now) {
    std::optional<Credentials> c;
    {
      absl::MutexLock lock(&mu);
      c.swap(renewed);
    }
    if (!c) return;
    config.cert_pem = c->cert_pem;
    config.key_pem = c->key_pem;
    if (!c->token.empty()) config.token = c->token;
    credentials = MakeCredentials();
    for (size_t i = 0; i < masters.size(); ++i) {
      channels[i] = grpc::CreateCustomChannel(masters[i], credentials, channel_args);
    }
    std::cerr << "agent " << config.agent.name << ": presents certificate " << c->serial
              << "; reconnecting" << std::endl;
    if (metrics != nullptr) {
      absl::StatusOr<std::unique_ptr<AgentMetrics>> again =
          AgentMetrics::Restart(std::move(metrics));
      if (again.ok()) {
        metrics = *std::move(again);
      } else {
        std::cerr << "agent: /metrics stopped: " << again.status() << std::endl;
      }
    }
    if (!stream) return;
    const std::string was = master();
    Disconnect(now);
    FollowLeader(was);  // the same master again, not passed over as dead
    dead.clear();
    backoff = absl::Milliseconds(100);
    next_attempt = now;
  }

  void TryConnect(absl::Time now) {
    if (connected || now < next_attempt) return;
    // A master that accepts connections but does not answer (stopped) would block the stream's
    // creation: wait for a ready channel only briefly, and retry with the backoff.
    if (!channels[current]->WaitForConnected(std::chrono::system_clock::now() +
                                             std::chrono::milliseconds(200))) {
      dead = master();
      NextMaster();
      next_attempt = now + backoff;
      backoff = std::min(backoff * 2, config.max_backoff);
      return;
    }
    ctx = std::make_unique<grpc::ClientContext>();
    if (!config.token.empty()) ctx->AddMetadata("authorization", "Bearer " + config.token);
    stream = v1::AgentService::NewStub(channels[current])->Connect(ctx.get());
    v1::AgentMessage hello;
    v1::AgentRegister* reg = hello.mutable_register_();
    const agent::HostInfo& host = runtime->host();
    reg->set_host(config.agent.name);
    Resources offered = host.allocatable;
    offered[Dim::kGpu] = 0;
    *reg->mutable_capacity() = wire::ToProto(offered);
    for (const agent::GpuDevice& g : host.gpus) reg->add_gpu_models(g.model);
    for (const auto& [k, v] : host.labels) (*reg->mutable_labels())[k] = v;
    v1::PortRange* ports = reg->add_ports();
    ports->set_first(host.port_min);
    ports->set_last(host.port_max);
    for (const agent::RunStatus& r : runtime->ListRuns()) {
      if (r.state == agent::RunState::kEnding) continue;
      v1::RunningTask* t = reg->add_running();
      *t->mutable_run() = wire::ToProto(r.run);
      for (const auto& [name, port] : r.ports) (*t->mutable_ports())[name] = port;
      for (int d : r.gpus) t->add_gpu_devices(static_cast<uint32_t>(d));
    }
    // Runs that ended while the master was out of reach: their final status waits in the
    // outbox and follows the registration. Listed as still had, so that the master does not
    // declare them lost (and run them again) in the meantime.
    absl::flat_hash_set<RunId> listed;
    for (const v1::RunningTask& t : reg->running()) listed.insert(wire::FromProto(t.run()));
    for (const agent::TaskEvent& e : runtime->PendingEvents()) {
      if (e.terminal() && listed.insert(e.run).second) {
        *reg->add_running()->mutable_run() = wire::ToProto(e.run);
      }
    }
    reg->set_isolation(host.isolation == agent::CgroupMode::kNone
                           ? "none"
                           : absl::StrCat("cgroup ", agent::CgroupModeName(host.isolation)));
    sent_gpu_health = runtime->GpuHealthVersion();
    wire::ToProto(runtime->GpuFaults(), reg->mutable_gpu_faults());
    reg->set_version(std::string(Version()));
    reg->set_commit(std::string(Commit()));
    reg->set_accepts_batches(true);
    // --address: the address its tasks are told (PACELINE_HOST_ADDRESS) is the host's.
    if (auto a = config.agent.base_env.find("PACELINE_HOST_ADDRESS");
        a != config.agent.base_env.end()) {
      reg->set_address(a->second);
    }
    // A failed write means the stream is over (a refusal comes with its status): no reader.
    const bool written = stream->Write(hello);
    {
      absl::MutexLock lock(&mu);
      reader_done = !written;
    }
    if (!written) {
      Disconnect(now);
      return;
    }
    reader = std::thread([this] {
      v1::MasterMessage msg;
      while (stream->Read(&msg)) {
        if (absl::Status s = wire::CheckBatch(msg); !s.ok()) {
          std::cerr << "agent " << config.agent.name
                    << ": ignored a message from the master: " << s.message() << std::endl;
          continue;
        }
        absl::MutexLock lock(&mu);
        wire::ForEachMessage(msg, [&](const v1::MasterMessage& m) { inbox.push_back(m); });
        runtime->Wakeup();
      }
      absl::MutexLock lock(&mu);
      reader_done = true;
      runtime->Wakeup();
    });
    connected = true;
    master_batches = false;
    last_sent = 0;
    next_heartbeat = now + heartbeat_interval;
  }

  void Disconnect(absl::Time now) {
    if (!stream) return;  // not connected (the loop stopping while it was away)
    bool ended;           // by the master: its status says why (a refusal names the leader)
    {
      absl::MutexLock lock(&mu);
      ended = reader_done;
    }
    if (ctx && !ended) ctx->TryCancel();
    if (reader.joinable()) reader.join();
    exec->CancelAll();  // the master that routed them is gone
    std::optional<std::string> leader;
    grpc::Status status = stream->Finish();
    if (ended) leader = LeaderOf(status);
    if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      std::cerr << "agent " << config.agent.name << ": the master at " << master()
                << " refused it: " << status.error_message() << std::endl;
    }
    stream.reset();
    ctx.reset();
    connected = false;
    announced = false;
    if (leader && *leader != master() && *leader != dead && !redirected) {
      std::cerr << "agent " << config.agent.name << ": the master at " << master()
                << " does not lead; following the leader at " << *leader << std::endl;
      FollowLeader(*leader);
      redirected = true;
      next_attempt = now;
      return;
    }
    redirected = false;
    const std::string was = master();
    NextMaster();
    if (leader) {
      // A master answered: the cluster is up, electing or about to name a new leader. Ask
      // again soon, without growing the backoff (that is for masters that do not answer).
      backoff = absl::Milliseconds(100);
      next_attempt = now + kRefusedRetry;
      return;
    }
    std::cerr << "agent " << config.agent.name << ": lost the master at " << was << "; reconnecting"
              << std::endl;
    dead = was;
    next_attempt = now + backoff;
    backoff = std::min(backoff * 2, config.max_backoff);
  }

  // The leader a refusal of the stream names (common/leader_hint.h).
  std::optional<std::string> LeaderOf(const grpc::Status& status) const {
    std::optional<absl::string_view> trailer;
    const auto& trailers = ctx->GetServerTrailingMetadata();
    if (auto it = trailers.find(kLeaderMetadataKey); it != trailers.end()) {
      trailer = absl::string_view(it->second.data(), it->second.size());
    }
    return RedirectedLeader(static_cast<absl::StatusCode>(status.error_code()), trailer,
                            status.error_message());
  }

  void HandleInbox(absl::Time now) {
    std::deque<v1::MasterMessage> msgs;
    bool done = false;
    {
      absl::MutexLock lock(&mu);
      msgs.swap(inbox);
      done = reader_done;
    }
    int launches = 0;
    for (const v1::MasterMessage& m : msgs) {
      if (m.has_registered()) {
        sent_images.reset();  // a new connection: the master gets the whole inventory again
        heartbeat_interval =
            absl::Milliseconds(std::max<int64_t>(100, m.registered().heartbeat_interval_ms()));
        master_batches = m.registered().accepts_batches();
        backoff = absl::Milliseconds(100);
        redirected = false;
        dead.clear();
        if (!announced) {
          std::cerr << "agent " << config.agent.name << ": registered with the master at "
                    << master() << std::endl;
          announced = true;
        }
      } else if (m.has_launch()) {
        absl::StatusOr<agent::LaunchRequest> req = wire::FromLaunch(m.launch());
        absl::Status s = req.ok() ? runtime->Launch(*req) : req.status();
        if (!s.ok()) SendLaunchRejected(m.launch().run(), s);
        // A batch of launches can take seconds on a loaded host: keep the master from taking
        // the host for dead meanwhile.
        SendHeartbeatIfDue(absl::Now());
        if (++launches % kLaunchesPerTurn == 0) runtime->RunOnce(absl::ZeroDuration());
      } else if (m.has_kill()) {
        (void)runtime->Kill(wire::FromProto(m.kill().run()),
                            absl::Milliseconds(m.kill().grace_ms()),
                            absl::Milliseconds(m.kill().deregistration_delay_ms()));
      } else if (m.has_ack()) {
        (void)runtime->Ack(m.ack().seq());
      } else if (m.has_logs()) {
        SendLogs(m.logs());
      } else if (m.has_purge_volumes()) {
        PurgeVolumes(m.purge_volumes().job_id());
      } else if (m.has_exec_start()) {
        const v1::ExecStart& e = m.exec_start();
        std::vector<std::string> argv(e.argv().begin(), e.argv().end());
        exec->Start(e,
                    runtime->ExecCommandFor(wire::FromProto(e.run()), argv, e.tty(), e.session()));
      } else if (m.has_exec_input()) {
        exec->Input(m.exec_input());
      } else if (m.has_renew_credential()) {
        RenewCredential(m.renew_credential());
      }
    }
    if (done && connected) Disconnect(now);
  }

  // A new credential for a live run: replaces its token file (a run that is not here, or has
  // ended, has nothing to replace).
  void RenewCredential(const v1::TaskCredentialRenewal& r) {
    std::optional<agent::RunStatus> run = runtime->GetRun(wire::FromProto(r.run()));
    if (!run.has_value() || run->sandbox.empty()) return;
    absl::Status s = agent::IdentityHook::ReplaceToken(run->sandbox, r.credential().token());
    if (!s.ok()) {
      std::cerr << "agent " << config.agent.name << ": the credential of run "
                << run->run.ToString() << " was not renewed: " << s << std::endl;
    }
  }

  void PurgeVolumes(uint64_t job) {
    std::error_code ec;
    std::string dir = absl::StrCat(config.agent.work_dir, "/volumes/", job);
    uintmax_t n = std::filesystem::remove_all(dir, ec);
    if (n > 0 || ec) {
      std::cerr << "agent " << config.agent.name << ": purged the volumes of job " << job
                << (ec ? absl::StrCat(" (incompletely: ", ec.message(), ")") : "") << std::endl;
    }
  }

  // A launch the runtime refused leaves nothing behind and no event in the outbox: tell the
  // master directly (best effort; seq 0 is never acknowledged).
  void SendLaunchRejected(const v1::RunRef& run, const absl::Status& s) {
    v1::AgentMessage msg;
    v1::TaskStatusUpdate* u = msg.mutable_status();
    *u->mutable_run() = run;
    u->set_state(s.code() == absl::StatusCode::kAlreadyExists ? v1::Task::LOST : v1::Task::FAILED);
    u->set_reason("LAUNCH_FAILED");
    u->set_message(std::string(s.message()));
    if (connected) (void)stream->Write(msg);
  }

  void SendLogs(const v1::LogRequest& r) {
    agent::LogRequest req;
    req.run = wire::FromProto(r.run());
    req.stream = r.stderr() ? agent::LogStream::kStderr : agent::LogStream::kStdout;
    if (r.tail_lines() > 0) req.tail_lines = r.tail_lines();
    req.offset = r.offset();
    if (r.max_bytes() > 0) req.max_bytes = r.max_bytes();
    v1::AgentMessage msg;
    v1::LogResponse* out = msg.mutable_logs();
    out->set_request_id(r.request_id());
    absl::StatusOr<agent::LogChunk> chunk = runtime->ReadLog(req);
    if (chunk.ok()) {
      out->set_data(chunk->data);
      out->set_offset(chunk->offset);
      out->set_next_offset(chunk->next_offset);
      out->set_finished(chunk->finished);
    } else {
      out->set_error(std::string(chunk.status().message()));
    }
    if (connected) (void)stream->Write(msg);
  }

  // How long the loop may wait before updates are due (they are ready and the interval ran).
  absl::Duration UpdatesDueIn(absl::Time now) const {
    if (!connected || runtime->LastEventSeq() <= last_sent) return absl::InfiniteDuration();
    return std::max(absl::ZeroDuration(), next_updates - now);
  }

  void SendPending(absl::Time now) {
    // Exec output first: someone is waiting at a terminal for it.
    std::vector<v1::AgentMessage> exec_out = exec->Take();
    if (!connected) return;
    for (const v1::AgentMessage& msg : exec_out) {
      if (!stream->Write(msg)) return Disconnect(now);
    }
    if (UpdatesDueIn(now) == absl::ZeroDuration()) {
      // The updates ready now go as few stream messages as the master allows (batches).
      next_updates = now + kUpdateInterval;
      std::deque<v1::AgentMessage> updates;
      uint64_t last = last_sent;
      for (const agent::TaskEvent& e : runtime->PendingEvents(1000)) {
        if (e.seq <= last_sent) continue;
        *updates.emplace_back().mutable_status() = wire::ToStatusUpdate(e);
        last = e.seq;
      }
      while (!updates.empty()) {
        if (master_batches) wire::PackFront(updates);
        if (!stream->Write(updates.front())) return Disconnect(now);
        updates.pop_front();
      }
      last_sent = last;
    }
    if (now >= next_usage) {
      // Sampled while connected only: the first report after a reconnect has a rate over the
      // time since the last sample, which is still an honest average.
      next_usage = now + config.usage_interval;
      if (std::optional<agent::UsageReport> r = usage.Sample(runtime->Usage(now))) {
        v1::AgentMessage msg = wire::ToUsageMessage(*r, config.usage_interval);
        AddImagesIfChanged(msg.mutable_usage());
        if (!stream->Write(msg)) return Disconnect(now);
      }
    }
    SendGpuHealthIfChanged(now);
    SendHeartbeatIfDue(now);
  }

  // The host's unhealthy GPUs (NVML health, devices/nvml.h), whenever they change.
  void SendGpuHealthIfChanged(absl::Time now) {
    const uint64_t version = runtime->GpuHealthVersion();
    if (!connected || version == sent_gpu_health) return;
    v1::AgentMessage msg;
    wire::ToProto(runtime->GpuFaults(), msg.mutable_gpu_health()->mutable_faults());
    if (!stream->Write(msg)) return Disconnect(now);
    sent_gpu_health = version;
  }

  // The image cache goes with a usage report when it changed since the last one sent on this
  // connection (the master keeps it; placement prefers hosts that have a task's image).
  void AddImagesIfChanged(v1::AgentUsage* usage) {
    image::ImageStore* images = runtime->images();
    if (images == nullptr) return;
    v1::ImageInventory inventory;
    for (const image::CachedImage& img : images->List()) {
      v1::HostImage* out = inventory.add_images();
      out->set_config_digest(img.config_digest);
      for (const std::string& ref : img.refs) out->add_refs(ref);
      out->set_size_bytes(img.size_bytes);
      if (img.last_used != absl::InfinitePast()) {
        out->set_last_used_unix_ms(absl::ToUnixMillis(img.last_used));
      }
      out->set_tasks(static_cast<uint32_t>(std::max(0, img.pins)));
    }
    std::string text = inventory.SerializeAsString();
    if (sent_images && *sent_images == text) return;
    *usage->mutable_images() = std::move(inventory);
    sent_images = std::move(text);
  }

  void SendHeartbeatIfDue(absl::Time now) {
    if (!connected || now < next_heartbeat) return;
    v1::AgentMessage msg;
    msg.mutable_heartbeat()->set_at_unix_ms(absl::ToUnixMillis(now));
    if (!stream->Write(msg)) return Disconnect(now);
    next_heartbeat = now + heartbeat_interval;
  }
};

absl::Status AgentDaemon::Run() {
  auto impl = std::make_unique<Impl>();
  impl->config = config_;
  agent::AgentConfig runtime_config = config_.agent;
  runtime_config.master_addr = config_.master_addr;
  runtime_config.master_ca_pem = config_.ca_pem;
  ASSIGN_OR_RETURN(impl->runtime, agent::TaskRuntime::Create(std::move(runtime_config)));
  RETURN_IF_ERROR(impl->runtime->Recover());
  impl->exec =
      std::make_unique<ExecSessions>([runtime = impl->runtime.get()] { runtime->Wakeup(); });
  grpc::ChannelArguments& args = impl->channel_args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS,
              static_cast<int>(absl::ToInt64Milliseconds(config_.keepalive_time)));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
              static_cast<int>(absl::ToInt64Milliseconds(config_.keepalive_timeout)));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Reconnect quickly once the master is back (the loop has its own backoff on top).
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(config_.max_backoff)));
  impl->credentials = impl->MakeCredentials();
  for (absl::string_view addr : absl::StrSplit(config_.master_addr, ',', absl::SkipEmpty())) {
    impl->AddMaster(std::string(absl::StripAsciiWhitespace(addr)));
  }
  if (impl->masters.empty()) return absl::InvalidArgumentError("--master: no address given");
  const agent::HostInfo& host = impl->runtime->host();
  std::cerr << "agent " << config_.agent.name << ": offers " << host.allocatable.ToString()
            << ", ports " << host.port_min << "-" << host.port_max << ", isolation "
            << host.isolation_detail << std::endl;
  if (config_.metrics) {
    AgentMetricsOptions m = *config_.metrics;
    m.host = config_.agent.name;
    m.version = std::string(Version());
    m.commit = std::string(Commit());
    m.isolation = host.isolation_detail;
    m.work_dir = config_.agent.work_dir;
    ASSIGN_OR_RETURN(impl->metrics, AgentMetrics::Start(std::move(m)));
    std::cerr << "agent " << config_.agent.name << ": serves "
              << (config_.metrics->tls ? "https://" : "http://")
              << impl->metrics->bound().ToString() << "/metrics" << std::endl;
  }
  impl_.store(impl.get());
  std::unique_ptr<CertificateRenewer> renewer;
  if (config_.renewal_files && config_.cert_check > absl::ZeroDuration()) {
    renewer = std::make_unique<CertificateRenewer>(
        CertificateRenewer::Options{*config_.renewal_files, config_.master_addr, config_.cert_check,
                                    config_.agent.name, config_.cert_pem},
        [impl = impl.get()](Credentials c) {
          absl::MutexLock lock(&impl->mu);
          impl->renewed = std::move(c);
          impl->runtime->Wakeup();
        });
  }
  while (!stop_.load()) {
    absl::Time now = absl::Now();
    impl->PresentRenewed(now);
    impl->TryConnect(now);
    impl->runtime->RunOnce(std::min(absl::Milliseconds(100), impl->UpdatesDueIn(now)));
    now = absl::Now();
    impl->HandleInbox(now);
    impl->SendPending(now);
    impl->PublishMetricsIfDue(now);
  }
  renewer.reset();
  impl_.store(nullptr);
  impl->Disconnect(absl::Now());
  (void)impl->runtime->Sync();
  return absl::OkStatus();
}

void AgentDaemon::Stop() {
  stop_.store(true);
  if (Impl* impl = impl_.load()) impl->runtime->Wakeup();
}

}  // namespace paceline::agentd
