// CDI specs and their registry (cdi.h).

#include "agent/devices/cdi.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/yaml_reader.h"

namespace paceline::agent {
namespace {

using yaml_internal::Diagnostics;
using yaml_internal::Field;
using yaml_internal::MapReader;
using yaml_internal::Quote;

constexpr std::array<absl::string_view, 6> kVersions = {"0.3.0", "0.4.0", "0.5.0",
                                                        "0.6.0", "0.7.0", "0.8.0"};
constexpr std::array<absl::string_view, 6> kHookNames = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"};

std::optional<std::string> RequiredString(MapReader& m, absl::string_view key,
                                          absl::string_view expected, Diagnostics& diag) {
  std::optional<Field> f = m.Require(key, expected);
  if (!f) return std::nullopt;
  std::optional<std::string> s = yaml_internal::ReadString(*f, diag);
  if (s && s->empty()) {
    diag.Error(f->loc, f->path, absl::StrCat("is empty; expected ", expected));
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> OptionalInt(const MapReader& m, absl::string_view key, Diagnostics& diag) {
  std::optional<Field> f = m.Get(key);
  if (!f) return std::nullopt;
  return yaml_internal::ReadInt(*f, 0, int64_t{1} << 32, diag);
}

std::vector<std::string> OptionalStrings(const MapReader& m, absl::string_view key,
                                         Diagnostics& diag) {
  std::optional<Field> f = m.Get(key);
  if (!f) return {};
  return yaml_internal::ReadStringList(*f, diag).value_or(std::vector<std::string>{});
}

// The items of a list of maps under `key`, each read by `read`.
template <typename Read>
void EachItem(const MapReader& m, absl::string_view key, absl::string_view expected,
              Diagnostics& diag, Read read) {
  std::optional<Field> f = m.Get(key);
  if (!f) return;
  std::optional<std::vector<Field>> items = yaml_internal::ReadSequence(*f, expected, diag);
  if (!items) return;
  for (const Field& item : *items) read(item);
}

CdiEdits ReadEdits(const Field& f, Diagnostics& diag) {
  static constexpr std::array<absl::string_view, 6> kKeys = {"env",   "deviceNodes",    "mounts",
                                                             "hooks", "additionalGIDs", "intelRdt"};
  CdiEdits e;
  MapReader m(f, kKeys, "container edits (env, deviceNodes, mounts, hooks, additionalGIDs)", diag);
  if (!m.ok()) return e;
  if (std::optional<Field> rdt = m.Get("intelRdt")) {
    diag.Error(rdt->loc, rdt->path, "is not applied by this agent; expected a spec without it");
  }
  e.env = OptionalStrings(m, "env", diag);
  for (const std::string& kv : e.env) {
    if (kv.find('=') == std::string::npos || kv.front() == '=') {
      diag.Error(m.Get("env")->loc, m.Get("env")->path,
                 absl::StrCat(Quote(kv), " is not KEY=VALUE"));
    }
  }
  EachItem(m, "deviceNodes", "a list of device nodes", diag, [&](const Field& item) {
    static constexpr std::array<absl::string_view, 9> kNodeKeys = {
        "path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"};
    MapReader n(item, kNodeKeys, "a device node (path, hostPath, type, major, minor, ...)", diag);
    if (!n.ok()) return;
    CdiDeviceNode node;
    node.path = RequiredString(n, "path", "the node's path in the container", diag).value_or("");
    if (std::optional<Field> h = n.Get("hostPath")) {
      node.host_path = yaml_internal::ReadString(*h, diag).value_or("");
    }
    if (std::optional<Field> t = n.Get("type")) {
      static constexpr std::array<absl::string_view, 2> kTypes = {"c", "b"};
      if (std::optional<size_t> i = yaml_internal::ReadEnum(*t, kTypes, diag)) {
        node.type = std::string(kTypes[*i]);
      }
    }
    node.major = OptionalInt(n, "major", diag);
    node.minor = OptionalInt(n, "minor", diag);
    node.file_mode = OptionalInt(n, "fileMode", diag);
    node.uid = OptionalInt(n, "uid", diag);
    node.gid = OptionalInt(n, "gid", diag);
    if (std::optional<Field> p = n.Get("permissions")) {
      std::optional<std::string> perms = yaml_internal::ReadString(*p, diag);
      if (perms && perms->find_first_not_of("rwm") != std::string::npos) {
        diag.Error(p->loc, p->path, "expected some of r, w and m");
      }
    }
    if (!node.path.empty() && node.path.front() != '/') {
      diag.Error(item.loc, item.path + ".path", "expected an absolute path");
    }
    e.device_nodes.push_back(std::move(node));
  });
  EachItem(m, "mounts", "a list of mounts", diag, [&](const Field& item) {
    static constexpr std::array<absl::string_view, 4> kMountKeys = {"hostPath", "containerPath",
                                                                    "type", "options"};
    MapReader n(item, kMountKeys, "a mount (hostPath, containerPath, type, options)", diag);
    if (!n.ok()) return;
    CdiMount mount;
    mount.host_path = RequiredString(n, "hostPath", "a path on the host", diag).value_or("");
    mount.container_path =
        RequiredString(n, "containerPath", "a path in the container", diag).value_or("");
    if (std::optional<Field> t = n.Get("type")) {
      mount.type = yaml_internal::ReadString(*t, diag).value_or("");
    }
    mount.options = OptionalStrings(n, "options", diag);
    e.mounts.push_back(std::move(mount));
  });
  EachItem(m, "hooks", "a list of hooks", diag, [&](const Field& item) {
    static constexpr std::array<absl::string_view, 5> kHookKeys = {"hookName", "path", "args",
                                                                   "env", "timeout"};
    MapReader n(item, kHookKeys, "a hook (hookName, path, args, env, timeout)", diag);
    if (!n.ok()) return;
    CdiHook hook;
    if (std::optional<Field> name = n.Require("hookName", "an OCI hook point")) {
      if (std::optional<size_t> i = yaml_internal::ReadEnum(*name, kHookNames, diag)) {
        hook.hook_name = std::string(kHookNames[*i]);
      }
    }
    hook.path = RequiredString(n, "path", "the hook's executable", diag).value_or("");
    hook.args = OptionalStrings(n, "args", diag);
    hook.env = OptionalStrings(n, "env", diag);
    hook.timeout = OptionalInt(n, "timeout", diag);
    e.hooks.push_back(std::move(hook));
  });
  if (std::optional<Field> g = m.Get("additionalGIDs")) {
    if (auto items = yaml_internal::ReadSequence(*g, "a list of group ids", diag)) {
      for (const Field& item : *items) {
        if (auto gid = yaml_internal::ReadInt(item, 0, int64_t{1} << 32, diag)) {
          e.additional_gids.push_back(*gid);
        }
      }
    }
  }
  return e;
}

// "vendor/class": vendor a DNS-like name, class a word.
bool ValidKind(absl::string_view kind) {
  const size_t slash = kind.find('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == kind.size()) return false;
  auto ok = [](absl::string_view part, absl::string_view extra) {
    return std::all_of(part.begin(), part.end(), [&](char c) {
      return absl::ascii_isalnum(c) || extra.find(c) != absl::string_view::npos;
    });
  };
  return ok(kind.substr(0, slash), ".-") && ok(kind.substr(slash + 1), "_.-");
}

CdiSpec ReadSpec(const Field& root, Diagnostics& diag) {
  static constexpr std::array<absl::string_view, 5> kKeys = {"cdiVersion", "kind", "annotations",
                                                             "devices", "containerEdits"};
  CdiSpec spec;
  MapReader m(root, kKeys, "a CDI spec (cdiVersion, kind, devices, containerEdits)", diag);
  if (!m.ok()) return spec;
  if (std::optional<Field> v = m.Require("cdiVersion", "a CDI version such as 0.5.0")) {
    if (std::optional<size_t> i = yaml_internal::ReadEnum(*v, kVersions, diag)) {
      spec.version = std::string(kVersions[*i]);
    }
  }
  if (std::optional<Field> k = m.Require("kind", "vendor/class, such as nvidia.com/gpu")) {
    spec.kind = yaml_internal::ReadString(*k, diag).value_or("");
    if (!spec.kind.empty() && !ValidKind(spec.kind)) {
      diag.Error(k->loc, k->path,
                 absl::StrCat(Quote(spec.kind), " is not vendor/class, such as nvidia.com/gpu"));
    }
  }
  if (std::optional<Field> a = m.Get("annotations")) {
    yaml_internal::ReadStringMap(*a, "a map of strings", diag);
  }
  if (std::optional<Field> e = m.Get("containerEdits")) spec.edits = ReadEdits(*e, diag);
  std::optional<Field> devices = m.Require("devices", "a list of devices");
  if (!devices) return spec;
  auto items = yaml_internal::ReadSequence(*devices, "a list of devices", diag);
  if (!items) return spec;
  for (const Field& item : *items) {
    static constexpr std::array<absl::string_view, 3> kDeviceKeys = {"name", "annotations",
                                                                     "containerEdits"};
    MapReader d(item, kDeviceKeys, "a device (name, containerEdits)", diag);
    if (!d.ok()) continue;
    std::optional<std::string> name = RequiredString(d, "name", "the device's name", diag);
    if (std::optional<Field> a = d.Get("annotations")) {
      yaml_internal::ReadStringMap(*a, "a map of strings", diag);
    }
    std::optional<Field> edits = d.Require("containerEdits", "the device's container edits");
    CdiEdits e = edits ? ReadEdits(*edits, diag) : CdiEdits{};
    if (!name) continue;
    if (spec.devices.contains(*name)) {
      diag.Error(item.loc, item.path + ".name", absl::StrCat("device ", Quote(*name), " twice"));
    }
    spec.devices[*name] = std::move(e);
  }
  return spec;
}

}  // namespace

void CdiEdits::Add(const CdiEdits& other) {
  env.insert(env.end(), other.env.begin(), other.env.end());
  device_nodes.insert(device_nodes.end(), other.device_nodes.begin(), other.device_nodes.end());
  mounts.insert(mounts.end(), other.mounts.begin(), other.mounts.end());
  hooks.insert(hooks.end(), other.hooks.begin(), other.hooks.end());
  additional_gids.insert(additional_gids.end(), other.additional_gids.begin(),
                         other.additional_gids.end());
}

absl::Status CompleteDeviceNodes(CdiEdits& edits) {
  for (CdiDeviceNode& n : edits.device_nodes) {
    const std::string& host = n.host_path.empty() ? n.path : n.host_path;
    struct stat st {};
    if (::stat(host.c_str(), &st) != 0 || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))) {
      return absl::FailedPreconditionError(absl::StrCat(
          "CDI device node ", host,
          ": not a device on this host; its CDI spec is out of date "
          "(generate it again, e.g. `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)"));
    }
    if (n.type.empty()) n.type = S_ISCHR(st.st_mode) ? "c" : "b";
    if (!n.major) n.major = major(st.st_rdev);
    if (!n.minor) n.minor = minor(st.st_rdev);
    if (!n.file_mode) n.file_mode = st.st_mode & 07777;
  }
  return absl::OkStatus();
}

absl::StatusOr<CdiSpec> ParseCdiSpec(absl::string_view text, absl::string_view file_name) {
  return yaml_internal::ParseSpecDocument<CdiSpec>(
      text, file_name, "CDI spec", ReadSpec,
      [](const CdiSpec&) { return std::vector<FieldError>{}; });
}

namespace {

// The spec files of `dir` (*.yaml, *.yml, *.json), sorted; none when it is missing.
std::vector<std::filesystem::path> SpecFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

CdiRegistry CdiRegistry::Load(const std::vector<std::string>& dirs) {
  CdiRegistry r;
  r.dirs_ = dirs;
  for (size_t d = 0; d < dirs.size(); ++d) {
    for (const std::filesystem::path& file : SpecFiles(dirs[d])) {
      std::ifstream in(file);
      std::stringstream text;
      text << in.rdbuf();
      if (!in) {
        r.AddError(absl::StrCat(file.string(), ": cannot be read"));
        continue;
      }
      absl::StatusOr<CdiSpec> spec = ParseCdiSpec(text.str(), file.string());
      if (!spec.ok()) {
        r.AddError(std::string(spec.status().message()));
        continue;
      }
      r.Add(*std::move(spec), file.string(), d);
    }
  }
  return r;
}

const CdiRegistry& CdiSpecDirs::Get() {
  std::string now;
  for (const std::string& dir : dirs_) {
    for (const std::filesystem::path& file : SpecFiles(dir)) {
      struct stat st {};
      if (::stat(file.c_str(), &st) != 0) st = {};
      absl::StrAppend(&now, file.string(), "\n", st.st_size, " ", st.st_mtim.tv_sec, ".",
                      st.st_mtim.tv_nsec, " ", st.st_ino, "\n");
    }
  }
  if (!registry_ || now != seen_) {
    registry_ = CdiRegistry::Load(dirs_);
    seen_ = std::move(now);
    ++loads_;
  }
  return *registry_;
}

void CdiRegistry::Add(CdiSpec spec, const std::string& file, size_t dir) {
  const size_t index = specs_.size();
  for (const auto& [name, edits] : spec.devices) {
    const std::string key = absl::StrCat(spec.kind, "=", name);
    auto [it, fresh] = devices_.try_emplace(key, Entry{file, dir, index, ""});
    if (fresh || it->second.dir < dir) {
      it->second = Entry{file, dir, index, ""};
    } else if (it->second.dir == dir) {
      if (it->second.conflict.empty()) it->second.conflict = file;
      errors_.push_back(
          absl::StrCat(key, ": named by both ", it->second.file, " and ", file, "; not used"));
    }
  }
  specs_.push_back(std::move(spec));
}

const CdiRegistry::Entry* CdiRegistry::Find(const std::string& key) const {
  auto it = devices_.find(key);
  return it == devices_.end() ? nullptr : &it->second;
}

const CdiEdits* CdiRegistry::Device(absl::string_view kind, absl::string_view name) const {
  const Entry* e = Find(absl::StrCat(kind, "=", name));
  if (e == nullptr || !e->conflict.empty()) return nullptr;
  return &specs_[e->spec].devices.at(std::string(name));
}

absl::StatusOr<CdiEdits> CdiRegistry::Resolve(absl::string_view kind,
                                              const std::vector<std::string>& names) const {
  CdiEdits out;
  std::vector<size_t> global_added;
  for (const std::string& name : names) {
    const std::string key = absl::StrCat(kind, "=", name);
    const Entry* e = Find(key);
    if (e == nullptr || !e->conflict.empty()) {
      std::string why = absl::StrCat(
          "device ", key, ": ",
          e == nullptr ? absl::StrCat("no CDI spec names it in ", absl::StrJoin(dirs_, ", "))
                       : absl::StrCat("named by both ", e->file, " and ", e->conflict));
      if (!errors_.empty()) absl::StrAppend(&why, " (", absl::StrJoin(errors_, "; "), ")");
      absl::StrAppend(&why,
                      "; generate a spec on this host, e.g. `nvidia-ctk cdi generate "
                      "--output=/etc/cdi/nvidia.yaml` (docs/containers.md, GPUs)");
      return absl::FailedPreconditionError(why);
    }
    const CdiSpec& spec = specs_[e->spec];
    if (std::find(global_added.begin(), global_added.end(), e->spec) == global_added.end()) {
      out.Add(spec.edits);
      global_added.push_back(e->spec);
    }
    out.Add(spec.devices.at(name));
  }
  return out;
}

}  // namespace paceline::agent
