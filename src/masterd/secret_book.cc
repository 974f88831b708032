#include "masterd/secret_book.h"

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "secrets/secret_path.h"
#include "spec/pool_path.h"

namespace paceline::masterd {

absl::StatusOr<std::unique_ptr<SecretBook>> SecretBook::Open(Cluster* cluster,
                                                             std::string key_file) {
  absl::StatusOr<secrets::Keyring> keyring = secrets::Keyring::LoadOrCreate(key_file);
  if (!keyring.ok()) return keyring.status();
  return std::unique_ptr<SecretBook>(
      new SecretBook(cluster, std::move(key_file), *std::move(keyring)));
}

SecretBook::SecretBook(Cluster* cluster, std::string key_file, secrets::Keyring keyring)
    : cluster_(cluster), key_file_(std::move(key_file)), keyring_(std::move(keyring)) {}

void SecretBook::Take(const std::vector<records::SecretRecord>& put,
                      const std::vector<std::string>& deleted, bool all) {
  // On a (re)build from the store — start, take-over — the key file is read again: the leader
  // may have resealed with a key added since this master started.
  std::optional<secrets::Keyring> reread;
  if (all) {
    absl::StatusOr<secrets::Keyring> k = secrets::Keyring::LoadOrCreate(key_file_);
    if (k.ok()) {
      reread = *std::move(k);
    } else {
      std::cerr << "master: " << k.status().message() << "; keeping the keys read before"
                << std::endl;
    }
  }
  absl::MutexLock lock(&mu_);
  if (reread) keyring_ = *std::move(reread);
  if (all) secrets_.clear();
  for (const std::string& path : deleted) secrets_.erase(path);
  std::map<std::string, int> unknown;  // key id -> secrets sealed with it that cannot open
  for (const records::SecretRecord& s : put) {
    secrets_[s.path] = s;
    if (!keyring_.Has(s.key_id)) ++unknown[s.key_id];
  }
  for (const auto& [key, n] : unknown) {
    std::cerr << "master: " << n << " secret(s) are sealed with key " << key << ", which is not in "
              << key_file_
              << "; tasks that name them will fail until this master has the key file of the "
                 "master that sealed them"
              << std::endl;
  }
}

void SecretBook::FillLaunch(const std::string& pool, v1::LaunchTask& launch) const {
  absl::MutexLock lock(&mu_);
  // The task's secrets, and the registry credentials of its container.
  std::vector<std::string> names;
  for (const v1::SecretRef& ref : launch.task().secrets()) names.push_back(ref.name());
  if (!launch.task().container().pull_secret().empty()) {
    names.push_back(launch.task().container().pull_secret());
  }
  for (const std::string& name : names) {
    const records::SecretRecord* found = nullptr;
    for (const std::string& path : secrets::Candidates(pool, name)) {
      auto it = secrets_.find(path);
      if (it != secrets_.end()) {
        found = &it->second;
        break;
      }
    }
    if (found == nullptr) {
      launch.set_secret_error(absl::StrCat("secret ", name, " is not in ", pool,
                                           pool == "/" ? "" : " or a pool above it",
                                           " (deleted after the job was created?)"));
      launch.clear_secret_values();
      return;
    }
    absl::StatusOr<std::string> value = keyring_.Open(found->path, {found->key_id, found->sealed});
    if (!value.ok()) {
      launch.set_secret_error(std::string(value.status().message()));
      launch.clear_secret_values();
      return;
    }
    (*launch.mutable_secret_values())[name] = *std::move(value);
  }
}

absl::Status SecretBook::ReserveLocked(const std::string& path) {
  if (rekeying_ || !busy_.insert(path).second) {
    return absl::AbortedError(
        absl::StrCat("secret ", path, " is being changed by another request; retry"));
  }
  return absl::OkStatus();
}

absl::Status SecretBook::CommitReserved(
    const std::string& path, records::WriteBatch batch,
    const std::function<absl::Status(const scheduler::SchedulerCore&)>& check) {
  absl::Status s =
      cluster_->Mutate([&](scheduler::SchedulerCore& core, absl::Time, scheduler::Actions& out) {
        if (absl::Status c = check(core); !c.ok()) return c;
        out.batch = batch;
        return absl::OkStatus();
      });
  absl::MutexLock lock(&mu_);
  busy_.erase(path);
  if (!s.ok()) return s;
  for (const std::string& p : batch.delete_secrets) secrets_.erase(p);
  for (const records::SecretRecord& r : batch.put_secrets) secrets_[r.path] = r;
  return absl::OkStatus();
}

absl::StatusOr<records::SecretRecord> SecretBook::Put(const std::string& path,
                                                      const std::string& value,
                                                      const std::string& by, bool replace) {
  absl::StatusOr<secrets::SecretPath> parsed = secrets::ParseSecretPath(path);
  if (!parsed.ok()) return parsed.status();
  records::SecretRecord record;
  record.path = path;
  record.created_by = by;
  record.created_at = record.updated_at = absl::Now();
  {
    // Checked and reserved at once: two creates of one path cannot both pass.
    absl::MutexLock lock(&mu_);
    if (absl::Status r = ReserveLocked(path); !r.ok()) return r;
    auto old = secrets_.find(path);
    if (old != secrets_.end()) {
      if (!replace) {
        busy_.erase(path);
        return absl::AlreadyExistsError(
            absl::StrCat("secret ", path, " exists; give --replace to change its value"));
      }
      record.created_by = old->second.created_by;
      record.created_at = old->second.created_at;
    }
    absl::StatusOr<secrets::Sealed> sealed = keyring_.Seal(path, value);
    if (!sealed.ok()) {
      busy_.erase(path);
      return sealed.status();
    }
    record.key_id = sealed->key_id;
    record.sealed = std::move(sealed->sealed);
  }
  records::WriteBatch batch;
  batch.put_secrets.push_back(record);
  absl::Status s =
      CommitReserved(path, std::move(batch), [&](const scheduler::SchedulerCore& core) {
        if (core.resources().tree().Find(parsed->pool)) return absl::OkStatus();
        return absl::NotFoundError(absl::StrCat("pool ", parsed->pool, " does not exist"));
      });
  if (!s.ok()) return s;
  return record;
}

absl::Status SecretBook::Delete(const std::string& path) {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status r = ReserveLocked(path); !r.ok()) return r;
    if (!secrets_.contains(path)) {
      busy_.erase(path);
      return absl::NotFoundError(absl::StrCat("secret ", path, " does not exist"));
    }
  }
  records::WriteBatch batch;
  batch.delete_secrets.push_back(path);
  return CommitReserved(path, std::move(batch),
                        [](const scheduler::SchedulerCore&) { return absl::OkStatus(); });
}

std::vector<records::SecretRecord> SecretBook::List(const std::string& pool, bool recursive) const {
  std::vector<records::SecretRecord> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [path, r] : secrets_) {
    absl::StatusOr<secrets::SecretPath> p = secrets::ParseSecretPath(path);
    if (!p.ok()) continue;
    bool below = pool == "/" || absl::StartsWith(p->pool, absl::StrCat(pool, "/"));
    if (p->pool == pool || (recursive && below)) out.push_back(r);
  }
  return out;
}

std::optional<std::string> SecretBook::Resolve(const std::string& pool,
                                               const std::string& name) const {
  absl::MutexLock lock(&mu_);
  for (const std::string& path : secrets::Candidates(pool, name)) {
    if (secrets_.contains(path)) return path;
  }
  return std::nullopt;
}

absl::StatusOr<std::pair<std::string, uint32_t>> SecretBook::Rekey() {
  absl::StatusOr<secrets::Keyring> keyring = secrets::Keyring::LoadOrCreate(key_file_);
  if (!keyring.ok()) return keyring.status();
  records::WriteBatch batch;
  {
    absl::MutexLock lock(&mu_);
    if (rekeying_ || !busy_.empty()) {
      return absl::AbortedError("secrets are being changed by another request; retry");
    }
    for (const auto& [path, r] : secrets_) {
      if (r.key_id == keyring->current_id()) continue;
      absl::StatusOr<std::string> value = keyring->Open(path, {r.key_id, r.sealed});
      if (!value.ok()) return value.status();  // a key was removed too early: change nothing
      absl::StatusOr<secrets::Sealed> sealed = keyring->Seal(path, *value);
      if (!sealed.ok()) return sealed.status();
      records::SecretRecord resealed = r;
      resealed.key_id = sealed->key_id;
      resealed.sealed = std::move(sealed->sealed);
      batch.put_secrets.push_back(std::move(resealed));
    }
    keyring_ = *keyring;
    rekeying_ = true;  // no other change of a secret until this one is durable
  }
  const auto count = static_cast<uint32_t>(batch.put_secrets.size());
  absl::Status s = absl::OkStatus();
  if (count > 0) {
    s = cluster_->Mutate([&](scheduler::SchedulerCore&, absl::Time, scheduler::Actions& out) {
      out.batch = batch;
      return absl::OkStatus();
    });
  }
  absl::MutexLock lock(&mu_);
  rekeying_ = false;
  if (!s.ok()) return s;
  for (const records::SecretRecord& r : batch.put_secrets) secrets_[r.path] = r;
  return std::make_pair(keyring->current_id(), count);
}

}  // namespace paceline::masterd
