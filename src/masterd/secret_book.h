#pragma once
// SecretBook: the master's api::SecretRecords over its Cluster — every secret sealed, in memory,
// loaded from the store whenever the cluster is (CoreKeeper::OnRecords), and written through the
// cluster like any change (durable before used; refused by a standby). It holds the keyring
// (secrets/keyring.h) read from the key file, and opens a value at one moment only: when a
// launch message for a task that names it is about to be sent to the task's agent (FillLaunch).
//
// Nothing here writes a value anywhere: not to a log, not to the store, not to an error.
//
// Thread-safety: every method is thread-safe.

#include <map>
#include <set>

#include "absl/synchronization/mutex.h"
#include "api/secret_records.h"
#include "masterd/cluster.h"
#include "secrets/keyring.h"

namespace paceline::masterd {

class SecretBook final : public api::SecretRecords {
 public:
  // Reads (or creates) the key file at `key_file`.
  static absl::StatusOr<std::unique_ptr<SecretBook>> Open(Cluster* cluster, std::string key_file);

  // Replaces the secrets with the store's (`all`), or applies a standby's read of what the
  // leader wrote and deleted.
  void Take(const std::vector<records::SecretRecord>& put, const std::vector<std::string>& deleted,
            bool all);
  // Puts the values of the secrets `launch` names into it (or, when one cannot be given, the
  // reason into its secret_error, so that the agent fails the run saying so).
  void FillLaunch(const std::string& pool, v1::LaunchTask& launch) const;

  absl::StatusOr<records::SecretRecord> Put(const std::string& path, const std::string& value,
                                            const std::string& by, bool replace) override;
  absl::Status Delete(const std::string& path) override;
  std::vector<records::SecretRecord> List(const std::string& pool, bool recursive) const override;
  std::optional<std::string> Resolve(const std::string& pool,
                                     const std::string& name) const override;
  absl::StatusOr<std::pair<std::string, uint32_t>> Rekey() override;

 private:
  SecretBook(Cluster* cluster, std::string key_file, secrets::Keyring keyring);
  // Holds `path` against other changes (ABORTED while one, or a rekey, is under way).
  absl::Status ReserveLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Commits `batch` for a reserved path, then releases it; runs `check` on the loop first (the
  // pool must exist, say).
  absl::Status CommitReserved(
      const std::string& path, records::WriteBatch batch,
      const std::function<absl::Status(const scheduler::SchedulerCore&)>& check);

  Cluster* const cluster_;
  const std::string key_file_;
  mutable absl::Mutex mu_;
  secrets::Keyring keyring_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, records::SecretRecord> secrets_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> busy_ ABSL_GUARDED_BY(mu_);  // paths with a change being committed
  bool rekeying_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace paceline::masterd
