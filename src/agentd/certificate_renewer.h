#pragma once
// CertificateRenewer: the agent's renewer thread (agent_daemon.h). It checks the joined host's
// certificate at start and every `check` interval, renews it once it is due
// (certificate_renewal.h), and hands the files' credentials to `present` whenever they are not
// the ones the agent presents (renewed here, or by `paceline agent renew`). A failed renewal is
// logged and tried again at the next check.
//
// Thread-safety: `present` runs on the renewer's thread; the destructor stops and joins it.

#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agentd/certificate_renewal.h"

namespace paceline::agentd {

class CertificateRenewer {
 public:
  struct Options {
    CredentialFiles files;
    std::string masters;  // HOST:PORT, comma-separated
    absl::Duration check;
    std::string agent;           // its name, for the log
    std::string presented_cert;  // the certificate the agent starts with (PEM)
  };
  CertificateRenewer(Options options, std::function<void(Credentials)> present);
  ~CertificateRenewer();
  CertificateRenewer(const CertificateRenewer&) = delete;
  CertificateRenewer& operator=(const CertificateRenewer&) = delete;

 private:
  void Loop();
  void RenewIfDue();

  const Options options_;
  const std::function<void(Credentials)> present_;
  std::string presented_;  // the renewer thread's
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace paceline::agentd
