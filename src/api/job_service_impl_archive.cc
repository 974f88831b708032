// JobServiceImpl: the calls on the archive of retired jobs (archive/archive_reader.h).

#include "absl/strings/str_cat.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_service_impl.h"
#include "nlohmann/json.hpp"

namespace paceline::api {
namespace {

constexpr uint32_t kMaxArchiveLimit = 10'000;
// An answer of QueryArchive stops short of this many bytes of lines (it always has one), so
// that clients with gRPC's default 4 MiB limit (the JSON gateway, most languages) can read it.
constexpr size_t kMaxAnswerBytes = 3 << 20;

grpc::Status NoArchive() {
  return ToGrpcStatus(absl::UnavailableError("this master keeps no archive of retired jobs"));
}

// The pool a line of the archive belongs to ("" when the line is not an object with one).
std::string PoolOf(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("pool") && j["pool"].is_string() ? j["pool"].get<std::string>()
                                                                      : "";
}

}  // namespace

grpc::Status JobServiceImpl::GetArchivedJob(grpc::ServerContext* ctx,
                                            const v1::GetArchivedJobRequest* req,
                                            v1::GetArchivedJobResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {}); !a.ok()) return a;
  if (archive_ == nullptr) return NoArchive();
  absl::StatusOr<std::optional<std::string>> line = archive_->FindJob(JobId(req->job_id()));
  if (!line.ok()) return ToGrpcStatus(line.status());
  // A job the caller may not read is as absent as one never archived.
  if (!line->has_value() || !MayRead(access_->Caller(ctx), PoolOf(**line))) {
    return ToGrpcStatus(absl::NotFoundError(absl::StrCat(
        "job_id: job ", req->job_id(),
        " is not in the archive (a job is archived after its pool's retention ends; until "
        "then: paceline job get ",
        req->job_id(), ")")));
  }
  resp->set_json(**std::move(line));
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::QueryArchive(grpc::ServerContext* ctx,
                                          const v1::QueryArchiveRequest* req,
                                          v1::QueryArchiveResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  if (archive_ == nullptr) return NoArchive();
  if (req->limit() > kMaxArchiveLimit) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("limit: ", req->limit(), " is above the maximum of ", kMaxArchiveLimit)));
  }
  if (req->since_unix_ms() < 0 || req->until_unix_ms() < 0 ||
      (req->until_unix_ms() != 0 && req->until_unix_ms() <= req->since_unix_ms())) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "since_unix_ms, until_unix_ms: expected 0 <= since < until (0: no bound)"));
  }
  archive::ArchiveQuery q;
  if (req->since_unix_ms() > 0) q.since = absl::FromUnixMillis(req->since_unix_ms());
  if (req->until_unix_ms() > 0) q.until = absl::FromUnixMillis(req->until_unix_ms());
  q.pool = req->pool();
  q.limit = req->limit() == 0 ? 100 : req->limit();
  absl::StatusOr<archive::ArchiveMatches> found = archive_->Find(q);
  if (!found.ok()) return ToGrpcStatus(found.status());
  const std::optional<access::Principal> caller = access_->Caller(ctx);
  bool truncated = found->truncated;
  size_t bytes = 0;
  for (std::string& line : found->lines) {
    if (!MayRead(caller, PoolOf(line))) continue;
    if (resp->jobs_size() > 0 && bytes + line.size() > kMaxAnswerBytes) {
      truncated = true;
      break;
    }
    bytes += line.size();
    resp->add_jobs(std::move(line));
  }
  resp->set_truncated(truncated);
  return grpc::Status::OK;
}

}  // namespace paceline::api
