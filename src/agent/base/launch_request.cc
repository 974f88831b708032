#include "agent/base/launch_request.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "spec/image_ref.h"

namespace paceline::agent {

std::string PortEnvSuffix(absl::string_view port_name) {
  std::string out;
  out.reserve(port_name.size());
  for (char c : port_name) {
    out.push_back(absl::ascii_isalnum(static_cast<unsigned char>(c))
                      ? absl::ascii_toupper(static_cast<unsigned char>(c))
                      : '_');
  }
  return out;
}

namespace {

bool ValidPortName(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

bool ValidEnvName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == '=' || c == '\0') return false;
  }
  return true;
}

// A health or readiness check (`field`): its port declared, its command not empty, its
// interval and timeout positive.
absl::Status ValidateCheck(absl::string_view what, absl::string_view field,
                           const std::optional<HealthSpec>& check,
                           const std::vector<std::string>& ports) {
  if (!check) return absl::OkStatus();
  const std::string* port = nullptr;
  if (auto* h = std::get_if<HttpCheck>(&check->check)) port = &h->port;
  if (auto* t = std::get_if<TcpCheck>(&check->check)) port = &t->port;
  if (port != nullptr && std::find(ports.begin(), ports.end(), *port) == ports.end()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", field, " check uses port '", *port,
                                                   "' which the task does not declare"));
  }
  if (auto* c = std::get_if<CommandCheck>(&check->check); c && c->command.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty ", field, " check command"));
  }
  if (check->interval <= absl::ZeroDuration() || check->timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", field, " interval and timeout must be positive"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLaunchRequest(const LaunchRequest& r) {
  const TaskSpec& s = r.spec;
  std::string what = absl::StrCat("launch of ", r.run.ToString());
  if (s.command.empty() && !s.container) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty command"));
  }
  if (s.container) {
    absl::StatusOr<spec::ImageRef> ref = spec::ParseImageRef(s.container->image);
    if (!ref.ok())
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", ref.status().message()));
  }
  if (s.command.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": command contains a NUL byte"));
  }
  if (!s.resources.IsNonNegative()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": negative resources"));
  }
  if (s.kill_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": negative kill_grace"));
  }
  std::set<std::string> suffixes;
  for (const std::string& p : s.ports) {
    if (!ValidPortName(p)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": port name '", p, "' must be 1-63 letters, digits, '_' or '-'"));
    }
    if (!suffixes.insert(PortEnvSuffix(p)).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": port names collide in PACELINE_PORT_",
                                                     PortEnvSuffix(p), "; rename one"));
    }
  }
  for (const auto& [name, port] : r.ports) {
    bool declared = false;
    for (const std::string& p : s.ports) declared |= (p == name);
    if (!declared || port == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": assigned port '", name, "' is not declared or is 0"));
    }
  }
  if (!r.secret_error.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", r.secret_error));
  }
  for (const SecretRef& ref : s.secrets) {
    if (!r.secret_values.contains(ref.name)) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": the master gave no value for secret ", ref.name));
    }
    if (!ref.env.empty() ? !ValidEnvName(ref.env)
                         : ref.file.empty() || ref.file.find('/') != std::string::npos ||
                               ref.file == "." || ref.file == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": secret ", ref.name, " has no valid variable or file name"));
    }
  }
  for (const auto& [k, v] : s.env) {
    if (!ValidEnvName(k) || v.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": env name '", k, "' must be non-empty without '=' or NUL"));
    }
  }
  RETURN_IF_ERROR(ValidateCheck(what, "health", s.health, s.ports));
  RETURN_IF_ERROR(ValidateCheck(what, "readiness", s.readiness, s.ports));
  for (int d : r.gpu_devices) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative GPU index"));
  }
  return absl::OkStatus();
}

}  // namespace paceline::agent
