#include "agent/health/health_monitor.h"

namespace paceline::agent {

HealthMonitor::HealthMonitor(const HealthSpec& spec, std::unique_ptr<HealthProbe> probe,
                             Poller& poller, NowFn now, OnChange on_change, Reschedule reschedule,
                             absl::Time running_since)
    : checker_(spec, running_since),
      probe_(std::move(probe)),
      poller_(poller),
      now_(std::move(now)),
      on_change_(std::move(on_change)),
      reschedule_(std::move(reschedule)) {}

HealthMonitor::~HealthMonitor() {
  Unwatch();
  if (running_) probe_->Abort();
}

absl::Time HealthMonitor::NextDeadline() const {
  return running_ ? probe_deadline_ : checker_.next_probe();
}

void HealthMonitor::Unwatch() {
  if (watch_id_ != 0) poller_.Remove(watch_id_);
  watch_id_ = 0;
}

void HealthMonitor::Finish(bool healthy, absl::Time now) {
  Unwatch();
  running_ = false;
  probe_deadline_ = absl::InfiniteFuture();
  if (std::optional<HealthState> changed = checker_.Record(healthy, now)) on_change_(*changed);
}

void HealthMonitor::OnTimer(absl::Time now) {
  if (running_) {
    if (now >= probe_deadline_) {
      probe_->Abort();
      Finish(false, now);
    }
    return;
  }
  if (now < checker_.next_probe()) return;
  std::optional<bool> result = probe_->Start();
  if (result) {
    Finish(*result, now);
    return;
  }
  running_ = true;
  probe_deadline_ = now + checker_.timeout();
  absl::StatusOr<uint64_t> id = poller_.Add(probe_->fd(), probe_->events(), [this](uint32_t ev) {
    std::optional<bool> r = probe_->OnReady(ev);
    if (r) {
      Finish(*r, now_());
      if (reschedule_) reschedule_();
    } else if (watch_id_ != 0) {
      poller_.Modify(watch_id_, probe_->events()).IgnoreError();
    }
  });
  if (!id.ok()) {
    probe_->Abort();
    Finish(false, now);
    return;
  }
  watch_id_ = *id;
}

}  // namespace paceline::agent
