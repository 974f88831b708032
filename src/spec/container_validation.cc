// The rules of task.container (docs/containers.md), part of ValidateJobSpec.

#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spec/field_path.h"
#include "spec/image_ref.h"
#include "spec/validation_internal.h"

namespace paceline::validation_internal {
namespace {

// An absolute, clean path: starts with '/', no empty, "." or ".." components, no NUL.
bool IsCleanAbsolutePath(absl::string_view p) {
  if (p.empty() || p.front() != '/' || p.size() > 4096) return false;
  if (p == "/") return true;
  for (absl::string_view c : absl::StrSplit(p.substr(1), '/')) {
    if (c.empty() || c == "." || c == ".." || absl::StrContains(c, '\0')) return false;
  }
  return true;
}

// A relative path inside the sandbox: no empty, "." or ".." components.
bool IsCleanRelativePath(absl::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  for (absl::string_view c : absl::StrSplit(p, '/')) {
    if (c.empty() || c == "." || c == "..") return false;
  }
  return true;
}

// "UID[:GID]" in numbers, or a user name as /etc/passwd spells one.
bool IsContainerUser(absl::string_view u) {
  if (u.empty() || u.size() > 64) return false;
  for (char c : u) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.' || c == ':')) return false;
  }
  return std::count(u.begin(), u.end(), ':') <= 1 && u.front() != ':' && u.back() != ':';
}

void CheckMounts(ErrorSink& sink, const TaskSpec& t, const ContainerSpec& c,
                 const std::string& prefix) {
  const std::string mounts = absl::StrCat(prefix, ".container.mounts");
  if (c.mounts.size() > kMaxContainerMounts) {
    sink.Add(mounts, absl::StrCat("lists ", c.mounts.size(), " mounts; at most ",
                                  kMaxContainerMounts, " are allowed"));
  }
  std::set<std::string> targets;
  for (size_t i = 0; i < c.mounts.size(); ++i) {
    const ContainerMount& m = c.mounts[i];
    std::string p = IndexPath(mounts, i);
    const std::string& s = m.source;
    bool ok_source = s == "tmpfs" || s == "volume" || s == "sandbox" ||
                     (absl::StartsWith(s, "sandbox/") && IsCleanRelativePath(s.substr(8))) ||
                     IsCleanAbsolutePath(s);
    if (!ok_source) {
      sink.Add(ChildPath(p, "source"),
               absl::StrCat("'", absl::CHexEscape(s),
                            "' is not a mount source; expected tmpfs, sandbox, sandbox/DIR, "
                            "volume, or an absolute host path without '.' or '..'"));
    } else if (s == "volume" && !t.volume) {
      sink.Add(ChildPath(p, "source"),
               absl::StrCat("is volume but the task has none; set ", ChildPath(prefix, "volume"),
                            " (stateful jobs only)"),
               {ChildPath(prefix, "volume")});
    } else if (s == "/") {
      sink.Add(ChildPath(p, "source"), "is the host's root; mount a directory below it");
    }
    if (!IsCleanAbsolutePath(m.target) || m.target == "/") {
      sink.Add(ChildPath(p, "target"),
               absl::StrCat("'", absl::CHexEscape(m.target),
                            "' is not a mount target; expected an absolute path below / "
                            "without '.' or '..', such as /data"));
    } else if (absl::StartsWith(m.target, "/proc") || absl::StartsWith(m.target, "/dev") ||
               absl::StartsWith(m.target, "/sys")) {
      sink.Add(ChildPath(p, "target"),
               absl::StrCat("'", m.target,
                            "' is under /proc, /dev or /sys, which the runtime "
                            "provides; choose another path"));
    } else if (!targets.insert(m.target).second) {
      sink.Add(ChildPath(p, "target"),
               absl::StrCat("'", m.target, "' is the target of an earlier mount too"));
    }
  }
}

}  // namespace

void CheckContainer(ErrorSink& sink, const JobSpec& /*spec*/, const TaskSpec& t,
                    const std::string& prefix) {
  if (!t.container) return;
  const ContainerSpec& c = *t.container;
  // `key` may be a dotted path below the task ("restart.policy").
  auto at = [&](absl::string_view key) { return absl::StrCat(prefix, ".", key); };
  if (c.image.empty()) {
    sink.Add(at("container.image"),
             "is required; expected an image reference such as registry.example.com/app:1.4");
  } else if (absl::StatusOr<spec::ImageRef> ref = spec::ParseImageRef(c.image); !ref.ok()) {
    sink.Add(at("container.image"), std::string(ref.status().message()));
  }
  if (!t.command.empty() && (c.entrypoint || c.args)) {
    sink.Add(at("container"),
             absl::StrCat("sets entrypoint or args and ", at("command"),
                          " is given too; the command runs as /bin/sh -c COMMAND in the "
                          "container: give one or the other"),
             {at("command")});
  }
  auto check_argv = [&](const std::string& path, const std::vector<std::string>& v) {
    for (size_t i = 0; i < v.size(); ++i)
      CheckText(sink, IndexPath(path, i), v[i], TextKind::kText);
  };
  if (c.entrypoint) check_argv(at("container.entrypoint"), *c.entrypoint);
  if (c.args) check_argv(at("container.args"), *c.args);
  if (!c.user.empty() && !IsContainerUser(c.user)) {
    sink.Add(at("container.user"),
             absl::StrCat("'", absl::CHexEscape(c.user),
                          "' is not a user; expected UID, UID:GID or a name in the image's "
                          "/etc/passwd"));
  }
  if (!c.pull_secret.empty() && !IsSecretName(c.pull_secret)) {
    sink.Add(at("container.pull_secret"),
             absl::StrCat("'", absl::CHexEscape(c.pull_secret),
                          "' is not a secret name; expected 1 to 63 characters from a-z, 0-9, "
                          "'.', '_' and '-'"));
  }
  if (!t.user.empty()) {
    sink.Add(at("user"),
             absl::StrCat("is a host user and the task runs in a container; set ",
                          at("container.user"), " instead"),
             {at("container.user"), at("container")});
  }
  CheckMounts(sink, t, c, prefix);
}

}  // namespace paceline::validation_internal
