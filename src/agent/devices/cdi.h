#pragma once
// CDI, the Container Device Interface (github.com/cncf-tags/container-device-interface): the
// spec files in /etc/cdi and /var/run/cdi that name a vendor's devices and say what a container
// needs to use each one — `nvidia-ctk cdi generate` writes NVIDIA's; containerd, CRI-O and
// Podman read them. The agent reads them to give a container task exactly its GPUs
// (docs/containers.md "GPUs").
//
// ParseCdiSpec reads one spec (YAML or JSON), strictly: cdiVersion 0.3.0 to 0.8.0, kind
// "vendor/class", devices with names, and the container edits honoured (below); an unknown key,
// a wrong type or a missing required field is an error naming FILE:LINE:COLUMN and the field.
// Honoured edits, in the spec's global containerEdits and each device's:
//   env             "KEY=VALUE" entries, added to the process's environment
//   deviceNodes     path (in the container), hostPath (default: path), type (c, b; default:
//                   the host node's), major/minor (default: the host node's), fileMode, uid,
//                   gid; permissions (r, w, m) are not honoured beyond what the node allows
//   mounts          hostPath, containerPath, type (default bind), options
//   hooks           hookName (prestart, createRuntime, createContainer, startContainer,
//                   poststart, poststop), path, args, env, timeout
//   additionalGIDs  added to the process's groups
// `annotations` are read and ignored; intelRdt (0.7.0) is refused: the agent does not apply it.
//
// CdiRegistry::Load reads every *.yaml, *.yml and *.json file of the directories given, in
// order; a later directory's spec of a device replaces an earlier one's (as /var/run/cdi
// overrides /etc/cdi). Two specs of one directory that name the same device conflict: that
// device is not resolved, and the error names both files. A file that does not parse is kept
// as an error and the rest still loads: a bad spec never stops the agent.
//
// CdiSpecDirs keeps the registry of some directories and reads it again only when they change
// (a spec file added or removed, or of another size or modification time; checked with stat
// at each Get, without parsing). The launch hooks that need the specs share one, so a launch
// reads them at most once, and not at all while they stay the same.
//
// Thread-safety: values; a registry is read-only once loaded. A CdiSpecDirs is used by one
// thread (the agent runtime's).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::agent {

// The CDI kind of the GPUs the agent hands out (nvidia-ctk names each by its index).
inline constexpr absl::string_view kGpuCdiKind = "nvidia.com/gpu";

struct CdiDeviceNode {
  std::string path;       // in the container
  std::string host_path;  // "" = path
  std::string type;       // "c", "b"; "" = the host node's
  std::optional<int64_t> major, minor, file_mode, uid, gid;
  friend bool operator==(const CdiDeviceNode&, const CdiDeviceNode&) = default;
};

struct CdiMount {
  std::string host_path;
  std::string container_path;
  std::string type;  // "" = bind
  std::vector<std::string> options;
  friend bool operator==(const CdiMount&, const CdiMount&) = default;
};

struct CdiHook {
  std::string hook_name;  // an OCI hook point
  std::string path;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::optional<int64_t> timeout;
  friend bool operator==(const CdiHook&, const CdiHook&) = default;
};

struct CdiEdits {
  std::vector<std::string> env;
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  std::vector<CdiHook> hooks;
  std::vector<int64_t> additional_gids;
  // Appends `other`'s edits.
  void Add(const CdiEdits& other);
  bool empty() const {
    return env.empty() && device_nodes.empty() && mounts.empty() && hooks.empty() &&
           additional_gids.empty();
  }
  friend bool operator==(const CdiEdits&, const CdiEdits&) = default;
};

struct CdiSpec {
  std::string version;
  std::string kind;                         // "nvidia.com/gpu"
  CdiEdits edits;                           // for every device of the spec
  std::map<std::string, CdiEdits> devices;  // by name ("0", "all", a UUID)
};

// One spec file's text; errors name `file_name`.
absl::StatusOr<CdiSpec> ParseCdiSpec(absl::string_view text, absl::string_view file_name);

// Fills what each device node leaves to the host (type, major, minor, file mode) from the
// host's node (hostPath, else path). FAILED_PRECONDITION naming a node that is not a character
// or block device on this host.
absl::Status CompleteDeviceNodes(CdiEdits& edits);

class CdiRegistry {
 public:
  // Reads the specs of `dirs` (a missing directory is skipped).
  static CdiRegistry Load(const std::vector<std::string>& dirs);
  // Adds one parsed spec as read from `file` of directory number `dir` (Load's order).
  void Add(CdiSpec spec, const std::string& file, size_t dir);
  void AddError(std::string error) { errors_.push_back(std::move(error)); }

  // The edits that give a container the devices `kind`=`names` (the specs' global edits once
  // per spec, then each device's). FAILED_PRECONDITION naming the first device no spec
  // resolves, the directories looked in, the files that did not parse, and how to generate
  // a spec.
  absl::StatusOr<CdiEdits> Resolve(absl::string_view kind,
                                   const std::vector<std::string>& names) const;
  // The edits of the device `kind`=`name` alone (not its spec's global edits); null when no
  // spec names it, or two of one directory do.
  const CdiEdits* Device(absl::string_view kind, absl::string_view name) const;
  // The files that did not parse, and the conflicts, one line each.
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  struct Entry {
    std::string file;
    size_t dir = 0;
    size_t spec = 0;       // index in specs_
    std::string conflict;  // the other file of the same directory that names it too
  };
  std::vector<std::string> dirs_;
  std::vector<CdiSpec> specs_;
  std::map<std::string, Entry> devices_;  // by "kind=name"
  // The entry of `key` ("kind=name"); null when no spec names it.
  const Entry* Find(const std::string& key) const;

  std::vector<std::string> errors_;
};

class CdiSpecDirs {
 public:
  explicit CdiSpecDirs(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}
  // The registry as the directories are now; valid until the next Get.
  const CdiRegistry& Get();
  // How many times the specs were read (for tests).
  int loads() const { return loads_; }

 private:
  std::vector<std::string> dirs_;
  std::string seen_;  // the spec files with their sizes and times, as last read
  std::optional<CdiRegistry> registry_;
  int loads_ = 0;
};

}  // namespace paceline::agent
