#pragma once
// Renewing a joined host's certificate (docs/operations.md "Joining hosts"): the files a join
// stores, when their certificate is due, and the renewal itself, shared by `paceline agent
// join`, `paceline agent renew` and the agent, which renews by itself (agent_daemon.h).
//
// A renewal makes a new key and CSR here (the key never leaves the host), and sends the CSR
// with the agent token over mutual TLS with the current certificate (AccessService.JoinHost,
// api/access_service.h); the master signs it and answers a new agent token made for the new
// certificate (the old ones stay valid until the old certificate ends, the old token at most a
// day: api/access_service.h).
//
// The four files must change together: a new key beside the old certificate connects nowhere,
// and a renewal needs the token made with the certificate it presents. So they are stored as a
// small journal: each new file is first written whole and synced beside its place as
// FILE.next, the certificate's last; then each is renamed into place, the certificate last.
// FILE.next of the certificate therefore says "a complete set is waiting": LoadCredentials (and
// every renewal) finishes such an interrupted store first, and drops the other .next files
// when it is absent (a store cut off before it was complete).
//
// Thread-safety: functions over their arguments and files; RenewCredentials blocks for up to
// `timeout` per master tried. One process at a time may store into one set of files.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::agentd {

// Where a joined host keeps its credentials (`agent join` writes them, `agent` reads them).
struct CredentialFiles {
  std::string ca, cert, key, token;
};

// What a join or a renewal answered, with the key made here.
struct Credentials {
  std::string ca_pem, cert_pem, key_pem, token;
  std::string serial;  // the certificate's, upper-case hex
  absl::Time not_after;
};

// When `cert_pem` is due for renewal: once two thirds of its validity have passed (a third of
// the validity stays as a margin for a master that cannot be reached meanwhile).
// INVALID_ARGUMENT when it is not a certificate.
absl::StatusOr<absl::Time> RenewalDue(const std::string& cert_pem);

// Stores `creds` into `files` (the journal above): the key and the token 0600, the certificate
// and the CA 0644; directories that do not exist are made (0700).
absl::Status StoreCredentials(const CredentialFiles& files, const Credentials& creds);

// Finishes or drops an interrupted store (above), then reads the files. `files.token` may be
// empty (a host with a certificate from `paceline cert agent`, and no agent token file).
// Errors name the file.
absl::StatusOr<Credentials> LoadCredentials(const CredentialFiles& files);

// Renews `current`, what LoadCredentials read from `files`, at the first of `masters`
// (HOST:PORT, comma-separated) that answers (one that cannot be reached, or a standby, is passed
// over), and stores the result in `files`. Errors name the file or the master; a refusal writes
// nothing.
absl::StatusOr<Credentials> RenewCredentials(const CredentialFiles& files,
                                             const Credentials& current, const std::string& masters,
                                             absl::Duration timeout);

}  // namespace paceline::agentd
