// PoolService.GetUsage (pool_service.h): usage accounting read from the store (usage_source.h),
// summed by pool, user, job or owner, of the pools the caller may read.

#include "absl/strings/str_cat.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/pool_service.h"

namespace paceline::api {
namespace {

absl::StatusOr<records::UsageGroup> GroupOf(const std::string& name) {
  if (name.empty() || name == "pool") return records::UsageGroup::kPool;
  if (name == "user") return records::UsageGroup::kUser;
  if (name == "job") return records::UsageGroup::kJob;
  if (name == "owner") return records::UsageGroup::kOwner;
  return absl::InvalidArgumentError(
      absl::StrCat("group_by: '", name, "' is not one of pool, user, job, owner"));
}

}  // namespace

grpc::Status PoolServiceImpl::GetUsage(grpc::ServerContext* ctx, const v1::GetUsageRequest* req,
                                       v1::GetUsageResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, {.pool = req->pool()}); !a.ok()) return a;
  absl::StatusOr<records::UsageGroup> group = GroupOf(req->group_by());
  if (!group.ok()) return ToGrpcStatus(group.status());
  if (req->since_unix_ms() < 0 || req->until_unix_ms() < 0 ||
      (req->until_unix_ms() != 0 && req->until_unix_ms() <= req->since_unix_ms())) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "since_unix_ms, until_unix_ms: expected 0 <= since < until (0: no bound)"));
  }
  if (usage_ == nullptr) {
    return ToGrpcStatus(absl::UnavailableError("this master keeps no usage"));
  }
  records::UsageQuery q;
  if (req->since_unix_ms() > 0) q.since = absl::FromUnixMillis(req->since_unix_ms());
  if (req->until_unix_ms() > 0) q.until = absl::FromUnixMillis(req->until_unix_ms());
  q.pool = req->pool();
  absl::StatusOr<std::vector<records::UsageRecord>> rows = usage_->ListUsage(q);
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  // Only the pools the caller may read: a scoped credential sees its subtree.
  const std::optional<access::Principal> caller = access_->Caller(ctx);
  std::erase_if(*rows, [&](const records::UsageRecord& r) { return !MayRead(caller, r.pool); });
  resp->set_group_by(req->group_by().empty() ? "pool" : req->group_by());
  for (const records::UsageTotal& t : records::SumUsage(*rows, *group, req->hourly())) {
    v1::UsageEntry* e = resp->add_entries();
    e->set_key(t.key);
    e->set_job_name(t.job_name);
    e->set_pool(t.pool);
    if (req->hourly()) e->set_hour_unix_ms(absl::ToUnixMillis(t.hour));
    e->set_cpu_seconds(t.cpu_seconds);
    e->set_memory_byte_seconds(t.memory_byte_seconds);
    e->set_gpu_seconds(t.gpu_seconds);
    e->set_tasks(t.tasks);
  }
  return grpc::Status::OK;
}

}  // namespace paceline::api
