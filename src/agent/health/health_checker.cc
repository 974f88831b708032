#include "agent/health/health_checker.h"

#include <algorithm>

namespace paceline::agent {

HealthChecker::HealthChecker(const HealthSpec& spec, absl::Time running_since)
    : spec_(spec), next_(running_since + spec.initial_delay) {}

std::optional<HealthState> HealthChecker::Record(bool healthy, absl::Time now) {
  next_ = now + spec_.interval;
  HealthState before = state_;
  if (healthy) {
    failures_ = 0;
    state_ = HealthState::kHealthy;
  } else {
    ++failures_;
    if (failures_ >= std::max<uint32_t>(spec_.failures, 1)) state_ = HealthState::kUnhealthy;
  }
  if (state_ != before) return state_;
  return std::nullopt;
}

}  // namespace paceline::agent
