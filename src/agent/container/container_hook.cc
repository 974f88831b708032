#include "agent/container/container_hook.h"

#include <algorithm>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/container/oci_config.h"
#include "agent/file_util.h"
#include "agent/host/host_info.h"
#include "common/check.h"
#include "common/status.h"
#include "spdlog/spdlog.h"
#include "spec/image_ref.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

namespace paceline::agent {
namespace {

// Reads ROOT/PATH with every symlink resolved inside ROOT (an image's /etc/passwd may be a
// link, and must never lead to the host's files).
absl::StatusOr<std::string> ReadInRoot(const std::string& root, const char* path) {
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return ErrnoStatus(errno, absl::StrCat("open ", root));
  struct open_how how = {};
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir.get(), path, &how, sizeof(how))));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path, " in the image"));
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof(buf))) > 0 && out.size() < (1 << 20)) {
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// The user a container runs as: "UID", "UID:GID", "NAME" or "NAME:GID"; names are looked up
// in the image's /etc/passwd.
absl::StatusOr<TaskUser> ResolveUser(const std::string& spec, const std::string& rootfs) {
  std::vector<std::string> parts = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  TaskUser u;
  int id = 0;
  if (absl::SimpleAtoi(parts[0], &id) && id >= 0) {
    u.uid = id;
    u.gid = id;
    u.name = parts[0];
  } else {
    absl::StatusOr<std::string> passwd = ReadInRoot(rootfs, "etc/passwd");
    if (!passwd.ok()) {
      return absl::NotFoundError(absl::StrCat("user '", parts[0],
                                              "' cannot be looked up: the image has no "
                                              "/etc/passwd; give a numeric UID[:GID]"));
    }
    for (absl::string_view line : absl::StrSplit(*passwd, '\n')) {
      std::vector<absl::string_view> f = absl::StrSplit(line, ':');
      if (f.size() < 7 || f[0] != parts[0]) continue;
      if (!absl::SimpleAtoi(f[2], &u.uid) || !absl::SimpleAtoi(f[3], &u.gid)) break;
      u.name = parts[0];
      u.home = std::string(f[5]);
    }
    if (u.uid < 0) {
      return absl::NotFoundError(
          absl::StrCat("user '", parts[0], "' is not in the image's /etc/passwd"));
    }
  }
  if (parts.size() == 2 && (!absl::SimpleAtoi(parts[1], &u.gid) || u.gid < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group '", parts[1], "' of user '", spec, "' is not a numeric GID"));
  }
  u.groups = {static_cast<uint32_t>(u.gid)};
  return u;
}

bool HasHostPath(const std::vector<std::string>& allowed, const std::string& path) {
  for (const std::string& a : allowed) {
    if (path == a || absl::StartsWith(path, a.back() == '/' ? a : absl::StrCat(a, "/"))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> OciRuntime::RunArgv(const std::string& id, const std::string& bundle,
                                             const std::string& config) const {
  return {path,
          absl::StrCat("--root=", root),
          "--cgroup-manager=disabled",
          "run",
          "--bundle",
          bundle,
          absl::StrCat("--config=", config),
          id};
}

std::vector<std::string> OciRuntime::ExecArgv(const std::string& id, int uid, int gid,
                                              const std::vector<std::string>& env,
                                              const std::string& command) const {
  std::vector<std::string> argv = {path, absl::StrCat("--root=", root), "--cgroup-manager=disabled",
                                   "exec", absl::StrCat("--user=", uid, ":", gid)};
  for (const std::string& kv : env) argv.push_back(absl::StrCat("--env=", kv));
  argv.insert(argv.end(), {id, "/bin/sh", "-c", command});
  return argv;
}

absl::StatusOr<OciRuntime> DetectOciRuntime(const std::string& configured,
                                            const std::string& state_dir) {
  OciRuntime rt;
  if (configured.empty()) return rt;
  rt.path = configured.find('/') == std::string::npos ? FindInPath(configured) : configured;
  if (rt.path.empty() || ::access(rt.path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the OCI runtime '", configured,
                     "' is not installed (apt-get install crun), or set container_runtime: \"\" "
                     "to run no containers on this host"));
  }
  rt.root = state_dir;
  struct statfs st;
  if (::statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == TMPFS_MAGIC &&
      ::statfs("/sys/fs/cgroup/unified", &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC) {
    absl::StatusOr<std::string> controllers = ReadFile("/sys/fs/cgroup/unified/cgroup.controllers");
    if (controllers.ok() && controllers->find_first_not_of(" \n") != std::string::npos) {
      rt.hide.push_back("/sys/fs/cgroup/unified");
    }
  }
  return rt;
}

ContainerHook::ContainerHook(const AgentConfig& config, OciRuntime runtime,
                             image::ImageStore* images, std::string wrapper_path,
                             const Clock& clock, std::vector<GpuDevice> gpus, CdiSpecDirs* cdi)
    : config_(config),
      runtime_(std::move(runtime)),
      images_(images),
      wrapper_path_(std::move(wrapper_path)),
      clock_(clock),
      gpus_(std::move(gpus)),
      cdi_(cdi) {}

absl::Status ContainerHook::Prepare(RunContext& ctx) {
  const std::optional<ContainerSpec>& c = ctx.request.spec.container;
  if (!c) return absl::OkStatus();
  if (runtime_.path.empty() || images_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this host runs no containers: ",
        runtime_.missing.empty() ? "its agent was started with --container-runtime \"\""
                                 : runtime_.missing));
  }
  ASSIGN_OR_RETURN(spec::ImageRef ref, spec::ParseImageRef(c->image));
  std::optional<image::CachedImage> cached = images_->Lookup(ref.ToString());
  if (!cached) {
    return absl::FailedPreconditionError(absl::StrCat(
        "image ", ref.ToString(), " is not in this host's image cache",
        c->pull == PullPolicy::kNever
            ? " and the task says pull: never; load it with `paceline image load` or allow pulls"
            : ""));
  }
  for (const ContainerMount& m : c->mounts) {
    if (m.source.front() == '/' && !HasHostPath(config_.container_host_paths, m.source)) {
      return absl::PermissionDeniedError(
          absl::StrCat("mount source ", m.source,
                       " is not a host path this agent allows (its config's "
                       "container_host_paths)"));
    }
  }
  // Garbage collection runs on this thread only: the cached tree stays until it is pinned.
  std::string user = !c->user.empty() ? c->user : cached->config.user;
  if (!user.empty()) {
    ASSIGN_OR_RETURN(TaskUser u, ResolveUser(user, cached->rootfs));
    if (u.uid == 0 && !config_.allow_root_tasks) {
      return absl::PermissionDeniedError(
          absl::StrCat("the container would run as root (user '", user,
                       "'), which this agent does not allow; set task.container.user"));
    }
    ctx.user = std::move(u);
  }
  ASSIGN_OR_RETURN(image::CachedImage img, images_->Pin(cached->config_digest, clock_.Now()));
  ctx.image = img.config_digest;
  return absl::OkStatus();
}

absl::Status ContainerHook::Finish(RunContext& ctx) {
  const std::optional<ContainerSpec>& c = ctx.request.spec.container;
  if (!c) return absl::OkStatus();
  ctx.container_id = absl::StrCat("paceline-", ctx.key);
  ctx.bundle = absl::StrCat(config_.work_dir, "/containers/", ctx.key);
  std::string rootfs = ctx.bundle + "/rootfs";
  for (const char* sub : {"/rootfs", "/upper", "/work"}) {
    RETURN_IF_ERROR(MakeDirs(ctx.bundle + sub, 0700));
  }
  ::chmod(rootfs.c_str(), 0755);
  std::optional<image::CachedImage> pinned = images_->Find(ctx.image);  // pinned by Prepare
  if (!pinned) return absl::InternalError(absl::StrCat("image ", ctx.image, " left the cache"));
  const image::CachedImage& img = *pinned;
  // The merged root takes the upper directory's mode and owner: make them the image's.
  struct stat root_st;
  if (::stat(img.rootfs.c_str(), &root_st) == 0) {
    std::string upper = ctx.bundle + "/upper";
    ::chmod(upper.c_str(), root_st.st_mode & 07777);
    if (::chown(upper.c_str(), root_st.st_uid, root_st.st_gid) != 0) {
      return ErrnoStatus(errno, absl::StrCat("chown ", upper));
    }
  }
  std::string options = absl::StrCat("lowerdir=", img.rootfs, ",upperdir=", ctx.bundle,
                                     "/upper,workdir=", ctx.bundle, "/work");
  if (::mount("overlay", rootfs.c_str(), "overlay", 0, options.c_str()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("mount the image's overlay at ", rootfs));
  }
  for (const ContainerMount& m : c->mounts) {
    if (m.source.rfind("sandbox/", 0) == 0) {
      RETURN_IF_ERROR(MakeDirs(absl::StrCat(ctx.sandbox, m.source.substr(7)), 0755));
      ::chown(absl::StrCat(ctx.sandbox, m.source.substr(7)).c_str(), ctx.user.uid, ctx.user.gid);
    }
  }
  // A container gets its GPUs through their CDI specs (cdi.h): exactly their edits.
  std::optional<CdiEdits> devices;
  if (!ctx.gpus.empty()) {
    std::vector<std::string> names;
    for (int gpu : ctx.gpus) {
      auto d = std::find_if(gpus_.begin(), gpus_.end(),
                            [&](const GpuDevice& g) { return g.index == gpu; });
      names.push_back(d != gpus_.end() ? d->CdiName() : std::to_string(gpu));
    }
    PL_CHECK(cdi_ != nullptr) << "a GPU host's container hook needs the CDI specs";
    absl::StatusOr<CdiEdits> edits = cdi_->Get().Resolve(kGpuCdiKind, names);
    if (!edits.ok()) return edits.status();
    RETURN_IF_ERROR(CompleteDeviceNodes(*edits));
    devices = *std::move(edits);
  }
  OciConfigInput in;
  in.devices = devices ? &*devices : nullptr;
  in.ctx = &ctx;
  in.image = &img.config;
  in.rootfs = rootfs;
  in.base_env = config_.base_env;
  in.env = ctx.TaskEnv();
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  in.hostname = host;
  in.init = wrapper_path_;
  ASSIGN_OR_RETURN(std::string json, BuildOciConfig(in));
  // With secret variables the config holds their values: it then lives in the secrets tmpfs,
  // never on the agent's disk.
  std::string dir = !ctx.secret_env.empty() && ctx.secrets_tmpfs ? ctx.secrets_dir : ctx.bundle;
  ctx.oci_config = absl::StrCat(dir, "/.oci-config.json");
  RETURN_IF_ERROR(WriteFile(ctx.oci_config, json, 0600));
  ctx.argv = runtime_.RunArgv(ctx.container_id, ctx.bundle, ctx.oci_config);
  ctx.unmounts = runtime_.hide;
  return absl::OkStatus();
}

absl::Status ContainerHook::Recover(RunContext& ctx) {
  if (ctx.image.empty() || images_ == nullptr) return absl::OkStatus();
  return images_->Pin(ctx.image, clock_.Now()).status();
}

void ContainerHook::Cleanup(RunContext& ctx, CleanupKind /*kind*/) {
  if (!ctx.bundle.empty()) {
    if (!runtime_.path.empty() && PathExists(absl::StrCat(runtime_.root, "/", ctx.container_id))) {
      // `crun run` removes its state when the container exits; this is for a runtime killed
      // before it could.
      RemoveTree(absl::StrCat(runtime_.root, "/", ctx.container_id)).IgnoreError();
    }
    std::string rootfs = ctx.bundle + "/rootfs";
    if (::umount2(rootfs.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
      spdlog::warn("run {}: unmount {}: {}", ctx.key, rootfs, std::strerror(errno));
    }
    RemoveTree(ctx.bundle).IgnoreError();
  }
  if (!ctx.image.empty() && images_ != nullptr) images_->Unpin(ctx.image);
  ctx.image.clear();
}

}  // namespace paceline::agent
