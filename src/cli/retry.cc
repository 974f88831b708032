#include "cli/retry.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paceline::cli {

Verdict Classify(CallKind kind, const Failure& f) {
  if (f.leader) return Verdict::kRedirect;
  if (!f.reached) return Verdict::kRetry;
  grpc::StatusCode code = f.status.error_code();
  if (code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return kind == CallKind::kRead ? Verdict::kRetry : Verdict::kMaybeDone;
  }
  return Verdict::kFinal;
}

std::string ReasonOf(const Failure& f) {
  if (f.leader) return absl::StrCat("not the leader, leader: ", *f.leader);
  const std::string& m = f.status.error_message();
  std::string lower = absl::AsciiStrToLower(m);
  struct Known {
    const char* text;
    const char* reason;
  };
  for (const Known& k :
       {Known{"connection refused", "connection refused"},
        Known{"dns resolution failed", "name not resolved"},
        Known{"name or service not known", "name not resolved"},
        Known{"no route to host", "no route to host"},
        Known{"network is unreachable", "network unreachable"},
        Known{"connection reset", "connection lost"}, Known{"socket closed", "connection lost"},
        Known{"broken pipe", "connection lost"}, Known{"goaway", "connection lost"}}) {
    if (absl::StrContains(lower, k.text)) return k.reason;
  }
  if (f.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return "no answer";
  if (m.empty()) return absl::StrCat("code ", static_cast<int>(f.status.error_code()));
  return m.size() <= 160 ? m : absl::StrCat(m.substr(0, 157), "...");
}

MasterRotation::MasterRotation(std::vector<std::string> addrs)
    : addrs_(std::move(addrs)), tried_(addrs_.size(), false) {}

bool MasterRotation::Listed(absl::string_view addr) const {
  return std::find(addrs_.begin(), addrs_.end(), addr) != addrs_.end();
}

void MasterRotation::MoveTo(absl::string_view addr) {
  auto it = std::find(addrs_.begin(), addrs_.end(), addr);
  if (it != addrs_.end()) at_ = static_cast<size_t>(it - addrs_.begin());
}

void MasterRotation::NewRound() { std::fill(tried_.begin(), tried_.end(), false); }

bool MasterRotation::Next(const std::optional<std::string>& leader) {
  tried_[at_] = true;
  size_t n = addrs_.size();
  size_t lead =
      leader
          ? static_cast<size_t>(std::find(addrs_.begin(), addrs_.end(), *leader) - addrs_.begin())
          : n;
  if (lead < n && !tried_[lead]) {
    at_ = lead;
    return true;
  }
  for (size_t k = 1; k < n; ++k) {
    size_t j = (at_ + k) % n;
    if (!tried_[j]) {
      at_ = j;
      return true;
    }
  }
  NewRound();
  at_ = lead < n ? lead : (at_ + 1) % n;
  return false;
}

absl::Duration Backoff::Next() {
  absl::Duration d = std::min(kMax, kFirst * (int64_t{1} << std::min(n_, 10)));
  ++n_;
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return d * jitter(rng_);
}

std::string RetryLine(absl::string_view addr, absl::string_view reason, absl::string_view next,
                      absl::Duration delay, int attempt, absl::Duration left) {
  std::string what;
  std::string in = absl::StrFormat("in %.1fs", absl::ToDoubleSeconds(delay));
  if (next == addr) {
    what = absl::StrCat("retrying ", in);
  } else {
    what = absl::StrCat("trying ", next, delay > absl::ZeroDuration() ? " " : "",
                        delay > absl::ZeroDuration() ? in : "");
  }
  int64_t secs =
      absl::ToInt64Seconds(absl::Ceil(std::max(left, absl::ZeroDuration()), absl::Seconds(1)));
  return absl::StrCat("paceline: master ", addr, " unavailable (", reason, "); ", what,
                      " (attempt ", attempt, ", ", secs, "s left)");
}

}  // namespace paceline::cli
