#include "agent/launch/volume_hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "common/status.h"

namespace paceline::agent {

std::string VolumeHook::VolumePath(const std::string& work_dir, const TaskId& task) {
  return absl::StrCat(work_dir, "/volumes/", task.job.value(), "/", task.instance);
}

absl::Status VolumeHook::Prepare(RunContext& ctx) {
  if (!ctx.request.spec.volume) return absl::OkStatus();
  std::string path = VolumePath(work_dir_, ctx.run().task);
  std::string job_dir = Dirname(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    RETURN_IF_ERROR(MakeDirs(job_dir, 0711));
    ::chmod(job_dir.c_str(), 0711);
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("mkdir ", path));
    }
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  }
  // The instance may run as another user than last time: hand the volume's root over.
  if (ctx.user.uid >= 0 && (st.st_uid != static_cast<uid_t>(ctx.user.uid) ||
                            st.st_gid != static_cast<gid_t>(ctx.user.gid))) {
    if (::chown(path.c_str(), static_cast<uid_t>(ctx.user.uid), static_cast<gid_t>(ctx.user.gid)) !=
        0) {
      return ErrnoStatus(errno, absl::StrCat("chown ", path, " to ", ctx.user.name));
    }
  }
  ctx.volume = path;
  ctx.env["PACELINE_VOLUME"] = path;
  return absl::OkStatus();
}

}  // namespace paceline::agent
