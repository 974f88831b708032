#include "agentd/certificate_renewer.h"

#include <iostream>
#include <utility>

namespace paceline::agentd {
namespace {

// A renewal gives up on a master after this long.
constexpr absl::Duration kRenewalTimeout = absl::Seconds(30);

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone());
}

}  // namespace

CertificateRenewer::CertificateRenewer(Options options, std::function<void(Credentials)> present)
    : options_(std::move(options)),
      present_(std::move(present)),
      presented_(options_.presented_cert),
      thread_([this] { Loop(); }) {}

CertificateRenewer::~CertificateRenewer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void CertificateRenewer::Loop() {
  absl::Time next = absl::Now();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithDeadline(absl::Condition(&stopping_), next);
      if (stopping_) return;
    }
    next = absl::Now() + options_.check;
    RenewIfDue();
  }
}

void CertificateRenewer::RenewIfDue() {
  const std::string& name = options_.agent;
  absl::StatusOr<Credentials> current = LoadCredentials(options_.files);
  absl::StatusOr<absl::Time> due = current.ok() ? RenewalDue(current->cert_pem) : current.status();
  if (!due.ok()) {
    std::cerr << "agent " << name << ": cannot check its certificate: " << due.status()
              << std::endl;
    return;
  }
  if (absl::Now() >= *due) {
    absl::StatusOr<Credentials> r =
        RenewCredentials(options_.files, *current, options_.masters, kRenewalTimeout);
    if (!r.ok()) {
      std::cerr << "agent " << name << ": could not renew its certificate " << current->serial
                << " (valid until " << Rfc3339(current->not_after) << "): " << r.status()
                << "; trying again in " << absl::FormatDuration(options_.check) << std::endl;
      return;
    }
    std::cerr << "agent " << name << ": renewed its certificate " << current->serial << ": now "
              << r->serial << ", valid until " << Rfc3339(r->not_after) << std::endl;
    current = *std::move(r);
  }
  if (current->cert_pem == presented_) return;
  presented_ = current->cert_pem;
  present_(*std::move(current));
}

}  // namespace paceline::agentd
