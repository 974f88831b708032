#include "access/task_credential.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/hex.h"

namespace paceline::access {
namespace {

constexpr size_t kMacDigits = 64;

std::string Hmac(absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

// What is signed: the claim, with a label so that no other HMAC of the key means the same.
std::string Claim(uint64_t job, uint32_t instance, uint32_t run, int64_t expires) {
  return absl::StrCat("paceline-task-v1/", job, "/", instance, "/", run, "/", expires);
}

absl::Status Malformed(absl::string_view why) {
  return absl::UnauthenticatedError(
      absl::StrCat("malformed task credential: ", why,
                   "; expected pltk_<job>_<instance>_<run>_<expires>_<signature>"));
}

}  // namespace

std::string DeriveTaskKey(absl::string_view admin_token) {
  return Hmac(admin_token, "paceline task credential key v1");
}

std::string MintTaskToken(absl::string_view key, const TaskClaim& claim) {
  const int64_t expires = absl::ToUnixSeconds(claim.expires);
  const std::string mac = Hmac(key, Claim(claim.job, claim.instance, claim.run, expires));
  return absl::StrCat(kTaskTokenPrefix, claim.job, "_", claim.instance, "_", claim.run, "_",
                      expires, "_", absl::BytesToHexString(mac));
}

bool IsTaskToken(absl::string_view token) { return absl::StartsWith(token, kTaskTokenPrefix); }

absl::StatusOr<TaskClaim> VerifyTaskToken(absl::string_view key, absl::string_view token,
                                          absl::Time now) {
  if (!IsTaskToken(token)) return Malformed("no pltk_ prefix");
  token.remove_prefix(kTaskTokenPrefix.size());
  std::vector<absl::string_view> parts = absl::StrSplit(token, '_');
  if (parts.size() != 5) return Malformed(absl::StrCat(parts.size(), " fields instead of 5"));
  TaskClaim claim;
  int64_t expires = 0;
  if (!absl::SimpleAtoi(parts[0], &claim.job) || !absl::SimpleAtoi(parts[1], &claim.instance) ||
      !absl::SimpleAtoi(parts[2], &claim.run) || !absl::SimpleAtoi(parts[3], &expires)) {
    return Malformed("the job, instance, run and expiry are numbers");
  }
  if (parts[4].size() != kMacDigits || !IsLowerHex(parts[4])) {
    return Malformed(absl::StrCat("the signature is ", kMacDigits, " lowercase hex digits"));
  }
  // The numbers as they were signed: a token with "007" for 7 is not the token that was minted.
  const std::string want =
      absl::BytesToHexString(Hmac(key, Claim(claim.job, claim.instance, claim.run, expires)));
  const std::string canonical =
      absl::StrCat(claim.job, "_", claim.instance, "_", claim.run, "_", expires, "_", parts[4]);
  if (canonical != token || key.empty() ||
      CRYPTO_memcmp(want.data(), parts[4].data(), kMacDigits) != 0) {
    return absl::UnauthenticatedError(absl::StrCat("task credential for task ", claim.job, "/",
                                                   claim.instance, " run ", claim.run,
                                                   ": wrong signature (not made by this cluster)"));
  }
  claim.expires = absl::FromUnixSeconds(expires);
  if (now >= claim.expires) {
    return absl::UnauthenticatedError(absl::StrCat(
        "task credential for task ", claim.job, "/", claim.instance, " run ", claim.run,
        " expired at ", absl::FormatTime(absl::RFC3339_sec, claim.expires, absl::UTCTimeZone()),
        " (the agent replaces the file before then; read it again)"));
  }
  return claim;
}

Principal TaskPrincipal(const TaskClaim& claim) {
  Principal p;
  p.user = absl::StrCat("task:", claim.job, "/", claim.instance, "/", claim.run);
  p.role = Role::kTask;
  p.scope = "";
  p.token_id = p.user;
  p.job = claim.job;
  p.instance = claim.instance;
  p.run = claim.run;
  return p;
}

absl::Status TaskMayUpdate(const Principal& who, bool has_spec, bool has_instances) {
  if (who.role != Role::kTask || (!has_spec && has_instances)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      who.Describe(), " may not update jobs: ",
      has_spec ? "a task's credential changes only its job's instance count, not its spec"
               : "a task's credential changes its job's instance count; instances: missing"));
}

}  // namespace paceline::access
