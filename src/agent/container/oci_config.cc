#include "agent/container/oci_config.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

using nlohmann::json;

constexpr absl::string_view kInitPath = "/.paceline/init";

// Docker's default capability set.
const std::vector<std::string>& DefaultCapabilities() {
  static const auto* caps = new std::vector<std::string>{
      "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
      "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
      "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
      "CAP_KILL",    "CAP_AUDIT_WRITE"};
  return *caps;
}

json Mount(const std::string& dest, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return {{"destination", dest}, {"type", type}, {"source", source}, {"options", options}};
}

json BindMount(const std::string& dest, const std::string& source, bool read_only) {
  std::vector<std::string> options = {"rbind", "nosuid", "nodev"};
  options.push_back(read_only ? "ro" : "rw");
  return Mount(dest, "bind", source, options);
}

std::string KeyOf(const std::string& kv) { return kv.substr(0, kv.find('=')); }

// The image's variables, then the task's; a variable of the agent's base_env (a host default
// such as PATH) does not replace the image's.
std::vector<std::string> MergeEnv(const OciConfigInput& in) {
  std::map<std::string, std::string> env;
  for (const std::string& kv : in.image->env) env[KeyOf(kv)] = kv;
  for (const std::string& kv : in.env) {
    std::string key = KeyOf(kv);
    auto base = in.base_env.find(key);
    bool host_default = base != in.base_env.end() && kv == absl::StrCat(key, "=", base->second);
    if (host_default && env.contains(key)) continue;
    env[key] = kv;
  }
  if (in.devices != nullptr) {
    for (const std::string& kv : in.devices->env) env[KeyOf(kv)] = kv;
  }
  std::vector<std::string> out;
  for (auto& [k, kv] : env) out.push_back(std::move(kv));
  return out;
}

// The CDI edits' nodes, mounts and hooks, in the runtime spec's terms.
void AddDevices(const CdiEdits& e, json& mounts, json& devices, json& hooks) {
  for (const CdiMount& m : e.mounts) {
    std::vector<std::string> options = m.options;
    if (options.empty()) options = {"rbind"};
    mounts.push_back(
        Mount(m.container_path, m.type.empty() ? "bind" : m.type, m.host_path, options));
  }
  for (const CdiDeviceNode& n : e.device_nodes) {
    json d = {{"path", n.path}, {"type", n.type}};
    if (n.major) d["major"] = *n.major;
    if (n.minor) d["minor"] = *n.minor;
    if (n.file_mode) d["fileMode"] = *n.file_mode;
    if (n.uid) d["uid"] = *n.uid;
    if (n.gid) d["gid"] = *n.gid;
    devices.push_back(d);
  }
  for (const CdiHook& h : e.hooks) {
    json hook = {{"path", h.path}};
    if (!h.args.empty()) hook["args"] = h.args;
    if (!h.env.empty()) hook["env"] = h.env;
    if (h.timeout) hook["timeout"] = *h.timeout;
    hooks[h.hook_name].push_back(hook);
  }
}

}  // namespace

std::vector<std::string> ContainerArgv(const ContainerSpec& c, const std::string& command,
                                       const image::ImageConfig& image) {
  if (!command.empty()) return {"/bin/sh", "-c", command};
  std::vector<std::string> argv = c.entrypoint ? *c.entrypoint : image.entrypoint;
  // Docker's rule: an entrypoint given in the spec drops the image's Cmd.
  const std::vector<std::string>& args =
      c.args ? *c.args : (c.entrypoint ? std::vector<std::string>{} : image.cmd);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

absl::StatusOr<std::string> BuildOciConfig(const OciConfigInput& in) {
  const RunContext& ctx = *in.ctx;
  const ContainerSpec& c = *ctx.request.spec.container;
  std::vector<std::string> argv = ContainerArgv(c, ctx.request.spec.command, *in.image);
  if (argv.empty()) {
    return absl::InvalidArgumentError(
        "nothing to run: the task has no command, the container no entrypoint or args, and the "
        "image no Entrypoint or Cmd");
  }
  // The init forwards signals to the command and reaps (task_wrapper_init.cc).
  argv.insert(argv.begin(), {std::string(kInitPath), "--mode=init", "--"});
  json user = {{"uid", ctx.user.uid < 0 ? 0 : ctx.user.uid},
               {"gid", ctx.user.gid < 0 ? 0 : ctx.user.gid}};
  std::vector<int64_t> groups(ctx.user.groups.begin(), ctx.user.groups.end());
  if (in.devices != nullptr) {
    groups.insert(groups.end(), in.devices->additional_gids.begin(),
                  in.devices->additional_gids.end());
  }
  if (!groups.empty()) user["additionalGids"] = groups;
  json process = {{"terminal", false},
                  {"user", user},
                  {"args", argv},
                  {"env", MergeEnv(in)},
                  {"cwd", ctx.sandbox},
                  {"noNewPrivileges", true},
                  {"capabilities",
                   {{"bounding", DefaultCapabilities()},
                    {"effective", DefaultCapabilities()},
                    {"permitted", DefaultCapabilities()}}}};

  json mounts = json::array({
      Mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
      Mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
  });
  mounts.push_back(BindMount(std::string(kInitPath), in.init, true));
  mounts.push_back(BindMount(ctx.sandbox, ctx.sandbox, false));
  if (!ctx.secrets_dir.empty()) mounts.push_back(BindMount(ctx.secrets_dir, ctx.secrets_dir, true));
  if (!ctx.volume.empty()) mounts.push_back(BindMount(ctx.volume, ctx.volume, false));
  if (c.network == ContainerNetwork::kHost) {
    for (const char* f : {"/etc/resolv.conf", "/etc/hosts"})
      mounts.push_back(BindMount(f, f, true));
  }
  for (const ContainerMount& m : c.mounts) {
    if (m.source == "tmpfs") {
      std::vector<std::string> options = {"nosuid", "nodev", "mode=1777"};
      if (m.read_only) options.push_back("ro");
      mounts.push_back(Mount(m.target, "tmpfs", "tmpfs", options));
    } else if (m.source == "volume") {
      mounts.push_back(BindMount(m.target, ctx.volume, m.read_only));
    } else if (m.source == "sandbox" || absl::StartsWith(m.source, "sandbox/")) {
      mounts.push_back(
          BindMount(m.target, absl::StrCat(ctx.sandbox, m.source.substr(7)), m.read_only));
    } else {
      mounts.push_back(BindMount(m.target, m.source, m.read_only));
    }
  }

  json devices = json::array();
  json hooks = json::object();
  if (in.devices != nullptr) AddDevices(*in.devices, mounts, devices, hooks);

  json namespaces = json::array();
  for (const char* ns : {"pid", "ipc", "uts", "mount"}) namespaces.push_back({{"type", ns}});
  if (c.network == ContainerNetwork::kNone) namespaces.push_back({{"type", "network"}});
  json linux = {{"namespaces", namespaces},
                {"maskedPaths",
                 {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                  "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
                  "/proc/scsi"}},
                {"readonlyPaths",
                 {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}};
  json config = {{"ociVersion", "1.0.2"},
                 {"process", process},
                 {"root", {{"path", in.rootfs}, {"readonly", c.read_only_rootfs}}},
                 {"hostname", in.hostname},
                 {"mounts", mounts},
                 {"linux", linux}};
  if (!devices.empty()) config["linux"]["devices"] = devices;
  if (!hooks.empty()) config["hooks"] = hooks;
  return config.dump(1);
}

}  // namespace paceline::agent
