#include "masterd/leadership.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/leader_hint.h"

namespace paceline::masterd {

Leadership::Leadership(std::unique_ptr<store::PgLease> lease, store::PostgresStore* store,
                       CoreKeeper* keeper, std::string holder, std::string address)
    : lease_(std::move(lease)),
      store_(store),
      keeper_(keeper),
      holder_(std::move(holder)),
      address_(std::move(address)),
      period_(lease_->duration() / 5) {}

Leadership::~Leadership() { Stop(); }

void Leadership::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Leadership::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
  if (leading_) {
    keeper_->StepDown(absl::UnavailableError("this master is stopping"));
    (void)lease_->Release(term_);  // a standby takes over at once
    leading_ = false;
  }
}

LeadershipStatus Leadership::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void Leadership::Loop() {
  do {
    Tick();
  } while (!stop_.WaitForNotificationWithTimeout(period_));
}

void Leadership::Tick() {
  absl::Time now = absl::Now();
  if (leading_) {
    absl::Status renewed = lease_->Renew(term_);
    if (renewed.ok()) {
      last_renewal_ = now;
      if (keeper_->Serving().ok()) return;
      // The cluster stopped by itself (a refused commit): lead again under a new term.
      std::cerr << "master: reloading under a new term after: " << keeper_->Serving().message()
                << std::endl;
    } else if (renewed.code() != absl::StatusCode::kFailedPrecondition &&
               now - last_renewal_ < lease_->duration() - period_) {
      return;  // the database did not answer; the lease still runs
    } else {
      Follow(renewed);
      return;
    }
  }
  absl::StatusOr<std::optional<uint64_t>> won = lease_->TryAcquire(holder_, address_);
  if (won.ok() && won->has_value()) {
    last_renewal_ = now;
    Lead(**won);
    return;
  }
  absl::StatusOr<store::LeaseInfo> info = lease_->Read();
  absl::MutexLock lock(&mu_);
  if (!won.ok() || !info.ok()) {
    status_.leader_address.clear();
    absl::Status why = won.ok() ? info.status() : won.status();
    keeper_->StepDown(absl::UnavailableError(absl::StrCat(
        "the store is unavailable (this master is a standby and cannot reach it: ", why.message(),
        ")")));
    return;
  }
  status_.leader = false;
  status_.term = info->term;
  status_.lease_age = info->since_renewal;
  if (status_.leader_address != info->address) {
    status_.leader_address = info->address;
    keeper_->StepDown(absl::UnavailableError(
        absl::StrCat("this master is a standby; the leader (term ", info->term, ") is at ",
                     info->address, "; ", kLeaderMarker, info->address)));
  }
}

void Leadership::Lead(uint64_t term) {
  term_ = term;
  absl::Status s = keeper_->BecomeLeader([this, term](store::Store&) { store_->FenceWith(term); });
  if (!s.ok()) {
    std::cerr << "master: could not take over as leader of term " << term << ": " << s.message()
              << std::endl;
    leading_ = false;
    (void)lease_->Release(term);
    return;
  }
  leading_ = true;
  std::cerr << "master: leading, term " << term << std::endl;
  absl::MutexLock lock(&mu_);
  status_ = LeadershipStatus{true, term, address_, absl::ZeroDuration()};
}

void Leadership::Follow(const absl::Status& why) {
  leading_ = false;
  std::cerr << "master: stepping down from term " << term_ << ": " << why.message() << std::endl;
  keeper_->StepDown(absl::UnavailableError(
      absl::StrCat("this master stopped leading (", why.message(), "); retry another master")));
  absl::MutexLock lock(&mu_);
  status_.leader = false;
  status_.leader_address.clear();
}

}  // namespace paceline::masterd
