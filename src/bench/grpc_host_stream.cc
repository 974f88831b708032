#include "bench/grpc_host_stream.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "wire/stream_batch.h"

namespace paceline::bench {

HostStream::HostStream(FakeAgent agent, v1::AgentService::Stub* stub, grpc::CompletionQueue* cq,
                       const HostStreamOptions* options, FleetStats* stats)
    : agent_(std::move(agent)),
      stub_(stub),
      cq_(cq),
      options_(options),
      stats_(stats),
      backoff_(options->min_backoff) {}

void HostStream::Connect(absl::Time now) {
  PL_CHECK(phase_ == Phase::kIdle && pending_ == 0) << agent_.name();
  if (connected_once_) stats_->Reconnected();
  connected_once_ = true;
  reconnect_at_ = now + backoff_;  // the earliest next attempt, if this one fails
  ctx_ = std::make_unique<grpc::ClientContext>();
  if (!options_->token.empty()) ctx_->AddMetadata("authorization", "Bearer " + options_->token);
  call_ = stub_->PrepareAsyncConnect(ctx_.get(), cq_);
  phase_ = Phase::kStarting;
  reading_ = writing_ = finish_called_ = cancelled_ = false;
  ++pending_;
  call_->StartCall(&start_tag_);
}

void HostStream::OnEvent(Op op, bool ok, absl::Time now) {
  PL_CHECK(pending_ > 0) << agent_.name();
  --pending_;
  switch (op) {
    case Op::kStart:
      if (!ok || phase_ != Phase::kStarting) {
        Fail(/*cancel=*/false);
        break;
      }
      phase_ = Phase::kOpen;
      Send({agent_.Register()});
      Read();
      break;
    case Op::kRead:
      reading_ = false;
      if (!ok) {
        Fail(/*cancel=*/false);
        break;
      }
      if (phase_ != Phase::kOpen) {
        MaybeFinish();
        break;
      }
      stats_->Received(in_);
      wire::ForEachMessage(in_, [&](const v1::MasterMessage& m) {
        if (!m.has_registered() || registered_) return;
        registered_ = true;
        master_batches_ = m.registered().accepts_batches() && agent_.batches();
        backoff_ = options_->min_backoff;
        stats_->Registered();
      });
      Send(agent_.OnMessage(in_, now));
      Read();
      break;
    case Op::kWrite:
      writing_ = false;
      if (!ok) {
        // The stream is over (e.g. the master refused it): Finish reports the master's status,
        // which a cancel of our own would replace with CANCELLED.
        Fail(/*cancel=*/false);
        break;
      }
      stats_->Wrote(out_.front());
      out_.pop_front();
      MaybeWrite();
      break;
    case Op::kFinish:
      if (!status_.ok() && !cancelled_) {
        stats_->StreamError(absl::StrCat(
            agent_.name(), ": ",
            absl::StatusCodeToString(static_cast<absl::StatusCode>(status_.error_code())), ": ",
            status_.error_message()));
      }
      break;
  }
  if (phase_ == Phase::kFinishing && finish_called_ && pending_ == 0) TearDown(now);
}

void HostStream::Tick(absl::Time now) {
  if (now >= agent_.NextDue()) Send(agent_.Due(now));
  if (phase_ == Phase::kIdle && !stopping_ && now >= reconnect_at_) Connect(now);
}

void HostStream::Cancel() {
  stopping_ = true;
  if (phase_ == Phase::kStarting || phase_ == Phase::kOpen) Fail(/*cancel=*/true);
}

void HostStream::Send(std::vector<v1::AgentMessage> msgs) {
  if (phase_ != Phase::kOpen) return;  // updates wait in the agent's outbox
  for (v1::AgentMessage& m : msgs) out_.push_back(std::move(m));
  MaybeWrite();
}

void HostStream::MaybeWrite() {
  if (phase_ != Phase::kOpen || writing_ || out_.empty()) return;
  writing_ = true;
  ++pending_;
  if (master_batches_) wire::PackFront(out_);
  call_->Write(out_.front(), &write_tag_);
}

void HostStream::Read() {
  reading_ = true;
  ++pending_;
  call_->Read(&in_, &read_tag_);
}

void HostStream::Fail(bool cancel) {
  if (phase_ != Phase::kFinishing) {
    phase_ = Phase::kFinishing;
    if (cancel) {
      cancelled_ = stopping_;  // our own cancel is not a stream error
      ctx_->TryCancel();
    }
  }
  MaybeFinish();
}

void HostStream::MaybeFinish() {
  // Finish once no read is in flight: it reports the server's status (or the cancel).
  if (phase_ != Phase::kFinishing || reading_ || finish_called_) return;
  finish_called_ = true;
  ++pending_;
  call_->Finish(&status_, &finish_tag_);
}

void HostStream::TearDown(absl::Time now) {
  call_.reset();
  ctx_.reset();
  out_.clear();
  master_batches_ = false;
  if (registered_) {
    registered_ = false;
    stats_->Unregistered();
  }
  agent_.Disconnected();
  phase_ = Phase::kIdle;
  reconnect_at_ = std::max(reconnect_at_, now + backoff_);
  backoff_ = std::min(backoff_ * 2, options_->max_backoff);
}

}  // namespace paceline::bench
