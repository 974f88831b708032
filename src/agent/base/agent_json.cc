#include "agent/base/agent_json.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

using nlohmann::json;

json TimeToJson(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) return nullptr;
  return absl::ToUnixNanos(t);
}
absl::Time TimeFromJson(const json& j, absl::Time infinite) {
  if (j.is_null()) return infinite;
  return absl::FromUnixNanos(j.get<int64_t>());
}

json RunToJson(const RunId& r) { return json::array({r.task.job.value(), r.task.instance, r.run}); }
RunId RunFromJson(const json& j) {
  return RunId{TaskId{JobId(j.at(0).get<uint64_t>()), j.at(1).get<uint32_t>()},
               j.at(2).get<uint32_t>()};
}

json HealthToJson(const HealthSpec& h) {
  json j = {{"interval_ns", absl::ToInt64Nanoseconds(h.interval)},
            {"timeout_ns", absl::ToInt64Nanoseconds(h.timeout)},
            {"failures", h.failures},
            {"initial_delay_ns", absl::ToInt64Nanoseconds(h.initial_delay)}};
  if (auto* c = std::get_if<CommandCheck>(&h.check)) j["command"] = c->command;
  if (auto* c = std::get_if<HttpCheck>(&h.check)) {
    j["http_port"] = c->port;
    j["http_path"] = c->path;
  }
  if (auto* c = std::get_if<TcpCheck>(&h.check)) j["tcp_port"] = c->port;
  return j;
}
HealthSpec HealthFromJson(const json& j) {
  HealthSpec h;
  h.interval = absl::Nanoseconds(j.at("interval_ns").get<int64_t>());
  h.timeout = absl::Nanoseconds(j.at("timeout_ns").get<int64_t>());
  h.failures = j.at("failures").get<uint32_t>();
  h.initial_delay = absl::Nanoseconds(j.at("initial_delay_ns").get<int64_t>());
  if (j.contains("command")) h.check = CommandCheck{j["command"].get<std::string>()};
  if (j.contains("http_port")) {
    h.check = HttpCheck{j["http_port"].get<std::string>(), j["http_path"].get<std::string>()};
  }
  if (j.contains("tcp_port")) h.check = TcpCheck{j["tcp_port"].get<std::string>()};
  return h;
}

json SpecToJson(const TaskSpec& s) {
  const Resources& r = s.resources;
  json j = {{"command", s.command},
            {"resources", {r.cpu_milli(), r.memory_bytes(), r.disk_bytes(), r.gpu_milli()}},
            {"ports", s.ports},
            {"env", s.env},
            {"kill_grace_ns", absl::ToInt64Nanoseconds(s.kill_grace)},
            {"user", s.user}};
  if (s.health) j["health"] = HealthToJson(*s.health);
  if (s.readiness) j["readiness"] = HealthToJson(*s.readiness);
  if (s.volume) j["volume_bytes"] = s.volume->size_bytes;
  if (!s.gpu_models.empty()) j["gpu_models"] = s.gpu_models;
  if (!s.secrets.empty()) {  // names only: values are never written to disk
    json refs = json::array();
    for (const SecretRef& r : s.secrets) refs.push_back({r.name, r.env, r.file});
    j["secrets"] = refs;
  }
  return j;
}
TaskSpec SpecFromJson(const json& j) {
  TaskSpec s;
  s.command = j.at("command").get<std::string>();
  const json& r = j.at("resources");
  s.resources = Resources::Of(r.at(0).get<int64_t>(), r.at(1).get<int64_t>(),
                              r.at(2).get<int64_t>(), r.at(3).get<int64_t>());
  s.ports = j.at("ports").get<std::vector<std::string>>();
  s.env = j.at("env").get<std::map<std::string, std::string>>();
  s.kill_grace = absl::Nanoseconds(j.at("kill_grace_ns").get<int64_t>());
  s.user = j.at("user").get<std::string>();
  if (j.contains("health")) s.health = HealthFromJson(j["health"]);
  if (j.contains("readiness")) s.readiness = HealthFromJson(j["readiness"]);
  if (j.contains("volume_bytes")) s.volume = VolumeSpec{j["volume_bytes"].get<int64_t>()};
  if (j.contains("gpu_models")) s.gpu_models = j["gpu_models"].get<std::vector<std::string>>();
  if (j.contains("secrets")) {
    for (const json& r : j["secrets"]) {
      s.secrets.push_back(
          {r.at(0).get<std::string>(), r.at(1).get<std::string>(), r.at(2).get<std::string>()});
    }
  }
  return s;
}

json RequestToJson(const LaunchRequest& r) {
  json j = {{"run", RunToJson(r.run)}, {"spec", SpecToJson(r.spec)}};
  if (!r.ports.empty()) j["ports"] = r.ports;
  if (!r.gpu_devices.empty()) j["gpu_devices"] = r.gpu_devices;
  if (r.peers) {
    json peers = json::object();
    for (const auto& [instance, p] : *r.peers) {
      peers[std::to_string(instance)] = {
          {"host", p.host}, {"address", p.address}, {"ports", p.ports}, {"role", p.role}};
    }
    j["peers"] = peers;
  }
  if (r.rendezvous) {
    j["rendezvous"] = {{"kind", RendezvousName(r.rendezvous->kind)},
                       {"port", r.rendezvous->port},
                       {"attempt", r.rendezvous->attempt}};
  }
  if (!r.role.empty()) j["role"] = r.role;
  return j;
}
LaunchRequest RequestFromJson(const json& j) {
  LaunchRequest r;
  r.run = RunFromJson(j.at("run"));
  r.spec = SpecFromJson(j.at("spec"));
  if (j.contains("ports")) r.ports = j["ports"].get<std::map<std::string, uint16_t>>();
  if (j.contains("gpu_devices")) r.gpu_devices = j["gpu_devices"].get<std::vector<int>>();
  if (j.contains("peers")) {
    r.peers.emplace();
    for (const auto& [key, p] : j["peers"].items()) {
      (*r.peers)[static_cast<uint32_t>(std::stoul(key))] = GangPeer{
          p.at("host").get<std::string>(), p.at("ports").get<std::map<std::string, uint16_t>>(),
          p.value("address", std::string()), p.value("role", std::string())};
    }
  }
  if (j.contains("rendezvous")) {
    const json& z = j["rendezvous"];
    const std::string kind = z.at("kind").get<std::string>();
    std::optional<Rendezvous> k = RendezvousFromName(kind);
    if (!k) throw json::other_error::create(501, "rendezvous.kind: unknown " + kind, &z);
    r.rendezvous =
        GangRendezvousRequest{*k, z.at("port").get<std::string>(), z.at("attempt").get<uint32_t>()};
  }
  r.role = j.value("role", std::string());
  return r;
}

template <typename Fn>
auto Parse(absl::string_view text, absl::string_view what, Fn fn) -> decltype(fn(json())) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat("malformed ", what));
  try {
    return fn(j);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed ", what, ": ", e.what()));
  }
}

}  // namespace

std::string RunContextToJson(const RunContext& c) {
  json j = {{"request", RequestToJson(c.request)},
            {"key", c.key},
            {"boot_id", c.boot_id},
            {"user",
             {{"name", c.user.name},
              {"uid", c.user.uid},
              {"gid", c.user.gid},
              {"groups", c.user.groups},
              {"home", c.user.home}}},
            {"sandbox", c.sandbox},
            {"run_state", c.run_state},
            {"volume", c.volume},
            {"ports", c.ports},
            {"gpus", c.gpus},
            {"cgroup", c.cgroup},
            {"cgroup_procs", c.cgroup_procs},
            {"env", c.env},
            {"final_env", c.final_env},
            {"secrets_dir", c.secrets_dir},
            {"secrets_tmpfs", c.secrets_tmpfs},
            {"image", c.image},
            {"container_id", c.container_id},
            {"bundle", c.bundle},
            {"oci_config", c.oci_config},
            {"wrapper_pid", c.wrapper_pid},
            {"wrapper_start", c.wrapper_start},
            {"task_pid", c.task_pid},
            {"task_start", c.task_start},
            {"started", TimeToJson(c.started)},
            {"kill_requested", c.kill_requested},
            {"kill_forced", c.kill_forced},
            {"kill_deadline", TimeToJson(c.kill_deadline)},
            {"kill_term_at", TimeToJson(c.kill_term_at)}};
  return j.dump();
}

absl::StatusOr<RunContext> RunContextFromJson(absl::string_view text) {
  return Parse(text, "checkpoint record", [](const json& j) -> absl::StatusOr<RunContext> {
    RunContext c;
    c.request = RequestFromJson(j.at("request"));
    c.key = j.at("key").get<std::string>();
    c.boot_id = j.at("boot_id").get<std::string>();
    const json& u = j.at("user");
    c.user =
        TaskUser{u.at("name").get<std::string>(), u.at("uid").get<int>(), u.at("gid").get<int>(),
                 u.at("groups").get<std::vector<uint32_t>>(), u.at("home").get<std::string>()};
    c.sandbox = j.at("sandbox").get<std::string>();
    c.run_state = j.at("run_state").get<std::string>();
    c.volume = j.at("volume").get<std::string>();
    c.ports = j.at("ports").get<std::map<std::string, uint16_t>>();
    c.gpus = j.at("gpus").get<std::vector<int>>();
    c.cgroup = j.at("cgroup").get<std::string>();
    c.cgroup_procs = j.at("cgroup_procs").get<std::vector<std::string>>();
    c.env = j.at("env").get<std::map<std::string, std::string>>();
    c.final_env = j.at("final_env").get<std::vector<std::string>>();
    c.secrets_dir = j.value("secrets_dir", std::string());
    c.secrets_tmpfs = j.value("secrets_tmpfs", false);
    c.image = j.value("image", std::string());
    c.container_id = j.value("container_id", std::string());
    c.bundle = j.value("bundle", std::string());
    c.oci_config = j.value("oci_config", std::string());
    c.wrapper_pid = j.at("wrapper_pid").get<int>();
    c.wrapper_start = j.at("wrapper_start").get<uint64_t>();
    c.task_pid = j.at("task_pid").get<int>();
    c.task_start = j.at("task_start").get<uint64_t>();
    c.started = TimeFromJson(j.at("started"), absl::InfinitePast());
    c.kill_requested = j.at("kill_requested").get<bool>();
    c.kill_forced = j.at("kill_forced").get<bool>();
    c.kill_deadline = TimeFromJson(j.at("kill_deadline"), absl::InfiniteFuture());
    // Absent in records written before deregistration delays: SIGTERM was sent with the kill.
    c.kill_term_at = TimeFromJson(j.value("kill_term_at", json()), absl::InfinitePast());
    return c;
  });
}

std::string TaskEventToJson(const TaskEvent& e) {
  json j = {{"seq", e.seq},
            {"time", absl::ToUnixNanos(e.time)},
            {"run", RunToJson(e.run)},
            {"type", static_cast<int>(e.type)},
            {"reason", static_cast<int>(e.reason)}};
  if (e.pid != 0) j["pid"] = e.pid;
  if (e.exit_code) j["exit_code"] = *e.exit_code;
  if (e.signal) j["signal"] = *e.signal;
  if (e.type == TaskEventType::kHealth) j["health"] = static_cast<int>(e.health);
  if (e.type == TaskEventType::kReadiness) j["readiness"] = static_cast<int>(e.readiness);
  if (!e.ports.empty()) j["ports"] = e.ports;
  if (!e.sandbox.empty()) j["sandbox"] = e.sandbox;
  if (!e.message.empty()) j["message"] = e.message;
  return j.dump();
}

absl::StatusOr<TaskEvent> TaskEventFromJson(absl::string_view text) {
  return Parse(text, "outbox event", [](const json& j) -> absl::StatusOr<TaskEvent> {
    TaskEvent e;
    e.seq = j.at("seq").get<uint64_t>();
    e.time = absl::FromUnixNanos(j.at("time").get<int64_t>());
    e.run = RunFromJson(j.at("run"));
    e.type = static_cast<TaskEventType>(j.at("type").get<int>());
    e.reason = static_cast<TerminationReason>(j.at("reason").get<int>());
    e.pid = j.value("pid", 0);
    if (j.contains("exit_code")) e.exit_code = j["exit_code"].get<int>();
    if (j.contains("signal")) e.signal = j["signal"].get<int>();
    if (j.contains("health")) e.health = static_cast<HealthState>(j["health"].get<int>());
    if (j.contains("readiness")) {
      e.readiness = static_cast<ReadinessState>(j["readiness"].get<int>());
    }
    if (j.contains("ports")) e.ports = j["ports"].get<std::map<std::string, uint16_t>>();
    e.sandbox = j.value("sandbox", "");
    e.message = j.value("message", "");
    return e;
  });
}

}  // namespace paceline::agent
