#include "bench/fake_agent.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/version.h"

namespace paceline::bench {
namespace {

constexpr int64_t kMilliPerGpu = 1000;
constexpr absl::Duration kMinHeartbeatInterval = absl::Milliseconds(100);
constexpr int kSigterm = 15;

RunId FromProto(const v1::RunRef& r) {
  return RunId{TaskId{JobId(r.job_id()), r.instance()}, r.run()};
}

void ToProto(const RunId& r, v1::RunRef* out) {
  out->set_job_id(r.task.job.value());
  out->set_instance(r.task.instance);
  out->set_run(r.run);
}

}  // namespace

absl::string_view FakeRunStateName(FakeRunState s) {
  switch (s) {
    case FakeRunState::kRunning:
      return "RUNNING";
    case FakeRunState::kSucceeded:
      return "SUCCEEDED";
    case FakeRunState::kKilled:
      return "KILLED";
  }
  return "?";
}

FakeAgent::FakeAgent(FakeHostSpec spec, std::shared_ptr<const FakeAgentOptions> options)
    : spec_(std::move(spec)), options_(std::move(options)) {}

v1::AgentMessage FakeAgent::Register() {
  registered_ = false;
  next_heartbeat_ = absl::InfiniteFuture();
  RecomputeNextDue();

  v1::AgentMessage msg;
  v1::AgentRegister* reg = msg.mutable_register_();
  reg->set_host(spec_.name);
  v1::Resources capacity = spec_.capacity;
  const int64_t gpus = capacity.gpu_milli() / kMilliPerGpu;
  capacity.set_gpu_milli(0);  // the master counts devices from gpu_models
  *reg->mutable_capacity() = capacity;
  for (int64_t i = 0; i < gpus; ++i) reg->add_gpu_models(spec_.gpu_model);
  for (uint32_t d : spec_.unhealthy_gpus) {
    v1::GpuFault* f = reg->add_gpu_faults();
    f->set_device(d);
    f->set_reason("XID 79: emulated fault");
  }
  for (const auto& [k, v] : spec_.labels) (*reg->mutable_labels())[k] = v;
  v1::PortRange* ports = reg->add_ports();
  ports->set_first(spec_.port_first);
  ports->set_last(spec_.port_last);
  for (const Run& r : runs_) {
    v1::RunningTask* t = reg->add_running();
    ToProto(r.id, t->mutable_run());
    if (r.held != nullptr) {
      for (const auto& [name, port] : r.held->ports) (*t->mutable_ports())[name] = port;
      for (uint32_t d : r.held->gpu_devices) t->add_gpu_devices(d);
    }
  }
  // Runs that ended but whose final update is not acknowledged: listed as still had, so that
  // the master does not declare them lost before that update (which follows) arrives.
  for (const Update& u : outbox_) {
    if (u.state == FakeRunState::kRunning) continue;
    bool listed =
        std::any_of(reg->running().begin(), reg->running().end(),
                    [&](const v1::RunningTask& t) { return FromProto(t.run()) == u.run; });
    if (!listed) ToProto(u.run, reg->add_running()->mutable_run());
  }
  reg->set_isolation(options_->isolation);
  reg->set_version(absl::StrCat(Version(), "-emulated"));
  reg->set_accepts_batches(options_->batches);
  return msg;
}

std::vector<v1::AgentMessage> FakeAgent::OnMessage(const v1::MasterMessage& msg, absl::Time now) {
  std::vector<v1::AgentMessage> out;
  if (msg.has_batch()) {
    for (const v1::MasterMessage& m : msg.batch().messages()) {
      if (m.has_batch()) continue;  // never sent by the master (wire::CheckBatch)
      std::vector<v1::AgentMessage> more = OnMessage(m, now);
      out.insert(out.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
    }
    return out;
  }
  switch (msg.body_case()) {
    case v1::MasterMessage::kRegistered: {
      heartbeat_interval_ = std::max(kMinHeartbeatInterval,
                                     absl::Milliseconds(msg.registered().heartbeat_interval_ms()));
      registered_ = true;
      next_heartbeat_ = now + heartbeat_interval_;
      // A new connection: whatever the previous one carried may be lost.
      out.reserve(outbox_.size());
      for (Update& u : outbox_) {
        out.push_back(ToMessage(u));
        u.last_sent = now;
      }
      break;
    }
    case v1::MasterMessage::kLaunch:
      out = Launch(msg.launch(), now);
      break;
    case v1::MasterMessage::kKill:
      out = Kill(FromProto(msg.kill().run()), now);
      break;
    case v1::MasterMessage::kAck:
      Ack(msg.ack().seq(), now);
      break;
    case v1::MasterMessage::kLogs: {
      v1::LogResponse* r = out.emplace_back().mutable_logs();
      r->set_request_id(msg.logs().request_id());
      r->set_error("emulated host has no logs");
      r->set_finished(true);
      break;
    }
    default:
      break;  // purge_volumes: an emulated host keeps no volumes
  }
  RecomputeNextDue();
  return out;
}

std::vector<v1::AgentMessage> FakeAgent::Launch(const v1::LaunchTask& launch, absl::Time now) {
  std::vector<v1::AgentMessage> out;
  const RunId id = FromProto(launch.run());
  if (std::any_of(runs_.begin(), runs_.end(), [&](const Run& r) { return r.id == id; }) ||
      std::any_of(outbox_.begin(), outbox_.end(), [&](const Update& u) { return u.run == id; })) {
    return out;  // a duplicate
  }
  Run& run = runs_.emplace_back();
  run.id = id;
  run.finish_at = now + options_->task_duration;  // InfiniteFuture for an infinite duration
  if (!launch.ports().empty() || !launch.gpu_devices().empty()) {
    run.held = std::make_unique<Held>();
    for (const auto& [name, port] : launch.ports()) run.held->ports.emplace_back(name, port);
    run.held->gpu_devices.assign(launch.gpu_devices().begin(), launch.gpu_devices().end());
  }
  if (options_->observer != nullptr) options_->observer->OnLaunched(id, now);
  Report(id, FakeRunState::kRunning, now, out);
  return out;
}

std::vector<v1::AgentMessage> FakeAgent::Kill(const RunId& id, absl::Time now) {
  std::vector<v1::AgentMessage> out;
  auto it = std::find_if(runs_.begin(), runs_.end(), [&](const Run& r) { return r.id == id; });
  if (it == runs_.end()) return out;  // not ours, or over already
  runs_.erase(it);
  Report(id, FakeRunState::kKilled, now, out);
  return out;
}

void FakeAgent::Ack(uint64_t seq, absl::Time now) {
  auto end =
      std::find_if(outbox_.begin(), outbox_.end(), [&](const Update& u) { return u.seq > seq; });
  if (options_->observer != nullptr) {
    for (auto it = outbox_.begin(); it != end; ++it) {
      options_->observer->OnAcked(it->run, it->state, it->at, now);
    }
  }
  outbox_.erase(outbox_.begin(), end);
}

void FakeAgent::Report(const RunId& run, FakeRunState state, absl::Time now,
                       std::vector<v1::AgentMessage>& out) {
  Update& u = outbox_.emplace_back();
  u.seq = next_seq_++;
  u.run = run;
  u.state = state;
  u.at = now;
  u.last_sent = absl::InfinitePast();
  if (registered_) {
    out.push_back(ToMessage(u));
    u.last_sent = now;
  }
  if (options_->observer != nullptr) options_->observer->OnSent(run, state, now);
}

std::vector<v1::AgentMessage> FakeAgent::Due(absl::Time now) {
  std::vector<v1::AgentMessage> out;
  if (now < next_due_) return out;
  // Runs that are over, in launch order.
  size_t kept = 0;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].finish_at <= now) {
      Report(runs_[i].id, FakeRunState::kSucceeded, now, out);
    } else {
      if (kept != i) runs_[kept] = std::move(runs_[i]);
      ++kept;
    }
  }
  runs_.resize(kept);
  if (registered_) {
    for (Update& u : outbox_) {
      if (u.last_sent + options_->resend_after <= now) {
        out.push_back(ToMessage(u));
        u.last_sent = now;
      }
    }
    if (now >= next_heartbeat_) {
      out.emplace_back().mutable_heartbeat()->set_at_unix_ms(absl::ToUnixMillis(now));
      next_heartbeat_ = now + heartbeat_interval_;
    }
  }
  RecomputeNextDue();
  return out;
}

void FakeAgent::Disconnected() {
  registered_ = false;
  next_heartbeat_ = absl::InfiniteFuture();
  RecomputeNextDue();
}

v1::AgentMessage FakeAgent::ToMessage(const Update& u) const {
  v1::AgentMessage msg;
  v1::TaskStatusUpdate* s = msg.mutable_status();
  s->set_seq(u.seq);
  ToProto(u.run, s->mutable_run());
  s->set_state(u.state == FakeRunState::kRunning     ? v1::Task::RUNNING
               : u.state == FakeRunState::kSucceeded ? v1::Task::SUCCEEDED
                                                     : v1::Task::KILLED);
  s->set_at_unix_ms(absl::ToUnixMillis(u.at));
  switch (u.state) {
    case FakeRunState::kRunning:
      s->set_exit_code(-1);
      break;
    case FakeRunState::kSucceeded:
      s->set_exit_code(0);
      break;
    case FakeRunState::kKilled:
      s->set_exit_code(-1);
      s->set_signal(kSigterm);
      s->set_reason("KILLED_GRACEFULLY");
      break;
  }
  return msg;
}

void FakeAgent::RecomputeNextDue() {
  absl::Time next = absl::InfiniteFuture();
  for (const Run& r : runs_) next = std::min(next, r.finish_at);
  if (registered_) {
    next = std::min(next, next_heartbeat_);
    for (const Update& u : outbox_) next = std::min(next, u.last_sent + options_->resend_after);
  }
  next_due_ = next;
}

size_t FakeAgent::HeapBytes() const {
  size_t n = runs_.capacity() * sizeof(Run) + outbox_.capacity() * sizeof(Update);
  for (const Run& r : runs_) {
    if (r.held != nullptr) {
      n += sizeof(Held) + r.held->ports.capacity() * sizeof(r.held->ports[0]) +
           r.held->gpu_devices.capacity() * sizeof(uint32_t);
    }
  }
  return n;
}

}  // namespace paceline::bench
