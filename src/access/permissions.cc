#include "access/permissions.h"

#include <array>

#include "absl/strings/str_cat.h"

namespace paceline::access {
namespace {

constexpr std::array kTable = std::to_array<Permission>({
    // --- the credentials and the audit log
    {"paceline.v1.AccessService/WhoAmI", Need::kSignedIn, "ask who they are", false, true},
    {"paceline.v1.AccessService/CreateToken", Need::kAdmin, "create tokens", true},
    {"paceline.v1.AccessService/ListTokens", Need::kAdmin, "list tokens", false},
    {"paceline.v1.AccessService/RevokeToken", Need::kAdmin, "revoke tokens", true},
    {"paceline.v1.AccessService/ListAudit", Need::kAdmin, "read the audit log", false},
    {"paceline.v1.AccessService/GetClusterCa", Need::kPublic, "read the cluster's CA", false},
    {"paceline.v1.AccessService/JoinHost", Need::kPublic, "join hosts (with a join token)", true},
    {"paceline.v1.AccessService/RevokeHostCertificate", Need::kAdmin, "revoke hosts' certificates",
     true},
    // --- the cluster and its hosts
    {"paceline.v1.ClusterService/GetInfo", Need::kPublic, "read the master's info", false, true},
    {"paceline.v1.ClusterService/GetHistory", Need::kSignedIn, "read the history", false},
    {"paceline.v1.HostService/ListHosts", Need::kSignedIn, "list hosts", false},
    {"paceline.v1.HostService/DrainHost", Need::kAdmin, "drain hosts", true},
    {"paceline.v1.HostService/DownHost", Need::kAdmin, "take hosts down", true},
    {"paceline.v1.HostService/UpHost", Need::kAdmin, "bring hosts up", true},
    {"paceline.v1.AgentService/Connect", Need::kAgent, "connect as an agent", false},
    // --- pools
    {"paceline.v1.PoolService/CreatePool", Need::kManagePool, "create pools", true},
    {"paceline.v1.PoolService/GetPool", Need::kSignedIn, "read pools", false},
    {"paceline.v1.PoolService/UpdatePool", Need::kManagePool, "update pools", true},
    {"paceline.v1.PoolService/DeletePool", Need::kManagePool, "delete pools", true},
    {"paceline.v1.PoolService/ListPools", Need::kSignedIn, "list pools", false},
    {"paceline.v1.PoolService/GetUsage", Need::kReadPool, "read pools' usage", false},
    // --- jobs
    {"paceline.v1.JobService/CreateJob", Need::kSubmit, "submit jobs", true},
    {"paceline.v1.JobService/GetJob", Need::kReadPool, "read jobs", false, true},
    {"paceline.v1.JobService/QueryJobs", Need::kReadPool, "list jobs", false, true},
    {"paceline.v1.JobService/KillJob", Need::kActOnJob, "kill jobs", true},
    {"paceline.v1.JobService/DeleteJob", Need::kActOnJob, "delete jobs", true},
    {"paceline.v1.JobService/RestartJob", Need::kActOnJob, "restart jobs", true},
    {"paceline.v1.JobService/GetArchivedJob", Need::kReadPool, "read archived jobs", false},
    {"paceline.v1.JobService/QueryArchive", Need::kReadPool, "read archived jobs", false},
    {"paceline.v1.JobService/Watch", Need::kReadPool, "watch jobs", false, true},
    {"paceline.v1.JobService/UpdateJob", Need::kActOnJob, "update jobs", true},
    {"paceline.v1.JobService/GetUpdate", Need::kReadPool, "read updates", false, true},
    {"paceline.v1.JobService/ListUpdates", Need::kReadPool, "read updates", false, true},
    {"paceline.v1.JobService/PauseUpdate", Need::kActOnJob, "pause updates", true},
    {"paceline.v1.JobService/ResumeUpdate", Need::kActOnJob, "resume updates", true},
    {"paceline.v1.JobService/AbortUpdate", Need::kActOnJob, "abort updates", true},
    {"paceline.v1.JobService/RollbackJob", Need::kActOnJob, "roll back jobs", true},
    {"paceline.v1.JobService/GetEndpoints", Need::kReadPool, "read endpoints", false},
    {"paceline.v1.JobService/WatchEndpoints", Need::kReadPool, "watch endpoints", false},
    // --- tasks
    {"paceline.v1.TaskService/ListTasks", Need::kReadPool, "read tasks", false, true},
    {"paceline.v1.TaskService/GetTask", Need::kReadPool, "read tasks", false, true},
    {"paceline.v1.TaskService/ListTaskEvents", Need::kReadPool, "read tasks", false, true},
    {"paceline.v1.TaskService/GetTaskLogs", Need::kReadPool, "read logs", false},
    {"paceline.v1.TaskService/KillTask", Need::kActOnJob, "kill tasks", true},
    {"paceline.v1.TaskService/ReleaseVolume", Need::kActOnJob, "release volumes", true},
    // A command inside a running task (`paceline task exec`): whoever may submit to the job's
    // pool. The handler (api/task_exec.cc) names the instance in the audit record's target.
    {"paceline.v1.TaskService/Exec", Need::kSubmit, "exec into tasks", true},
    // --- secrets (values go in, never out)
    {"paceline.v1.SecretService/PutSecret", Need::kManageSecrets, "put secrets", true},
    {"paceline.v1.SecretService/ListSecrets", Need::kReadPool, "list secrets", false, true},
    {"paceline.v1.SecretService/DeleteSecret", Need::kManageSecrets, "delete secrets", true},
    {"paceline.v1.SecretService/RekeySecrets", Need::kAdmin, "reseal secrets", true},
    // --- HTTP routes (by pattern)
    {"GET /", Need::kPublic, "open the web UI", false},
    {"GET /ui", Need::kPublic, "open the web UI", false},
    {"GET /ui/*", Need::kPublic, "open the web UI", false},
    {"GET /healthz", Need::kPublic, "read the health", false},
    {"GET /metrics", Need::kSignedIn, "read the metrics", false},
    {"GET /api/v1/:service/:method", Need::kViaRpc, "call the API", false},
    {"POST /api/v1/:service/:method", Need::kViaRpc, "call the API", false},
});

// What a task's credential may call, on its own job only (see OpenToTasks).
constexpr std::array<absl::string_view, 14> kTaskRoutes = {
    "paceline.v1.AccessService/WhoAmI",    "paceline.v1.JobService/GetJob",
    "paceline.v1.JobService/UpdateJob",    "paceline.v1.JobService/GetUpdate",
    "paceline.v1.JobService/ListUpdates",  "paceline.v1.TaskService/ListTasks",
    "paceline.v1.TaskService/GetTask",     "paceline.v1.TaskService/ListTaskEvents",
    "paceline.v1.TaskService/GetTaskLogs", "paceline.v1.TaskService/KillTask",
    "paceline.v1.TaskService/Exec",        "paceline.v1.JobService/Watch",
    "paceline.v1.JobService/GetEndpoints", "paceline.v1.JobService/WatchEndpoints",
};

bool IsClient(Role r) { return r != Role::kAgent && r != Role::kTask; }

bool HoldsPool(const Principal& who, const Target& target) {
  if (who.role == Role::kAdmin) return true;
  // No pool named: the whole tree.
  return InScope(who.scope, target.pool.empty() ? "/" : target.pool);
}

absl::Status Deny(const Principal& who, const Permission& what, const Target& target,
                  absl::string_view why = "") {
  std::string msg = absl::StrCat(who.Describe(), " may not ", what.action);
  if (!target.pool.empty()) absl::StrAppend(&msg, " in ", target.pool);
  if (!why.empty()) absl::StrAppend(&msg, ": ", why);
  return absl::PermissionDeniedError(msg);
}

// A task's credential: the routes open to tasks, on its own job.
absl::Status AuthorizeTask(const Principal& who, const Permission& what, const Target& target) {
  if (what.need == Need::kPublic || what.need == Need::kViaRpc) return absl::OkStatus();
  if (!OpenToTasks(what.route)) {
    return Deny(who, what, target,
                "a task's credential reads its own job, scales it and kills and execs into its "
                "instances; nothing else");
  }
  if (what.need == Need::kSignedIn) return absl::OkStatus();  // who am I
  if (target.job == 0 || target.job != who.job) {
    return Deny(who, what, target,
                absl::StrCat(target.object.empty() ? "that" : target.object,
                             " is not the task's own job (job ", who.job, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

bool OpenToTasks(absl::string_view route) {
  for (absl::string_view r : kTaskRoutes) {
    if (r == route) return true;
  }
  return false;
}

absl::Span<const Permission> Permissions() { return kTable; }

const Permission* FindPermission(absl::string_view route) {
  for (const Permission& p : kTable) {
    if (p.route == route) return &p;
  }
  return nullptr;
}

absl::string_view RpcRoute(absl::string_view grpc_method) {
  if (!grpc_method.empty() && grpc_method.front() == '/') grpc_method.remove_prefix(1);
  return grpc_method;
}

absl::Status Authorize(const Principal& who, const Permission& what, const Target& target) {
  if (who.role == Role::kTask) return AuthorizeTask(who, what, target);
  switch (what.need) {
    case Need::kPublic:
    case Need::kViaRpc:
      return absl::OkStatus();
    case Need::kAgent:
      if (who.role != Role::kAgent) {
        return Deny(who, what, target, "only an agent credential opens the agent protocol");
      }
      if (who.scope != "*" && !target.host.empty() && who.scope != target.host) {
        return absl::PermissionDeniedError(
            absl::StrCat(who.Describe(), " may not connect as host ", target.host));
      }
      return absl::OkStatus();
    case Need::kSignedIn:
      return IsClient(who.role) ? absl::OkStatus() : Deny(who, what, target);
    case Need::kReadPool:
      // No pool: a listing, filtered by the handler to what `who` may read.
      if (!IsClient(who.role)) return Deny(who, what, target);
      return target.pool.empty() || HoldsPool(who, target) ? absl::OkStatus()
                                                           : Deny(who, what, target);
    case Need::kAdmin:
      return who.role == Role::kAdmin ? absl::OkStatus() : Deny(who, what, target);
    case Need::kManagePool:
      // A pool-admin shapes the pools below its scope's root, not the root itself: its share,
      // reservation and limit are set by whoever holds its parent.
      if (who.role == Role::kAdmin) return absl::OkStatus();
      if (who.role == Role::kPoolAdmin && HoldsPool(who, target) && target.pool != who.scope) {
        return absl::OkStatus();
      }
      return Deny(who, what, target,
                  who.role == Role::kPoolAdmin && target.pool == who.scope
                      ? "the root of a pool-admin's scope is managed by whoever holds its parent"
                      : "");
    case Need::kManageSecrets:
      if (who.role == Role::kAdmin) return absl::OkStatus();
      return who.role == Role::kPoolAdmin && HoldsPool(who, target) ? absl::OkStatus()
                                                                    : Deny(who, what, target);
    case Need::kSubmit:
    case Need::kActOnJob: {
      if (who.role == Role::kAdmin) return absl::OkStatus();
      bool may =
          (who.role == Role::kPoolAdmin || who.role == Role::kSubmitter) && HoldsPool(who, target);
      if (!may) return Deny(who, what, target);
      if (what.need == Need::kSubmit || who.role == Role::kPoolAdmin) return absl::OkStatus();
      if (target.owner == who.user) return absl::OkStatus();
      if (!who.group.empty() && target.owner_group == who.group) return absl::OkStatus();
      std::string whose =
          target.owner.empty() ? "nobody (submitted without authentication)" : target.owner;
      if (!target.owner_group.empty()) absl::StrAppend(&whose, " (group ", target.owner_group, ")");
      return Deny(
          who, what, target,
          absl::StrCat(target.object.empty() ? "the job" : target.object, " belongs to ", whose));
    }
  }
  return Deny(who, what, target, "unknown permission");
}

}  // namespace paceline::access
