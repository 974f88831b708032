// DaemonSettings: a daemon's flags, its config file, and the effective configuration (see
// daemon_config.h).

#include "main/daemon_config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/check.h"
#include "spec/yaml_reader.h"

namespace paceline::cli {
namespace {

using yaml_internal::Diagnostics;
using yaml_internal::Field;

// A config file larger than this is refused before it is read: no daemon's file comes near it.
constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

using Value = std::variant<std::string, bool, double, std::vector<std::string>>;

// Whether `s` can be written as a YAML plain scalar that reads back as the same string: a
// conservative set of characters that covers paths, addresses, durations and quantities.
// `in_list`: inside a flow list, where ':' is left quoted too.
bool PlainSafe(absl::string_view s, bool in_list) {
  if (s.empty() || s == "null" || s == "Null" || s == "NULL") return false;
  if (!absl::ascii_isalnum(s.front()) && s.front() != '/' && s.front() != '.' && s.front() != '_') {
    return false;
  }
  if (s.back() == ':') return false;
  for (char c : s) {
    if (absl::ascii_isalnum(c)) continue;
    if (absl::StrContains("/._-@%+=", c)) continue;
    if (c == ':' && !in_list) continue;
    return false;
  }
  return true;
}

// `s` as a YAML scalar: plain when safe, else double-quoted with escapes.
std::string Scalar(absl::string_view s, bool in_list = false) {
  if (PlainSafe(s, in_list)) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          absl::StrAppendFormat(&out, "\\x%02x", u);
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace

std::string SettingSource::ToString() const {
  switch (kind) {
    case Kind::kDefault:
      return "default";
    case Kind::kFlag:
      return "flag";
    case Kind::kEnv:
      return absl::StrCat("env ", env);
    case Kind::kFile:
      return absl::StrCat(file, ":", line, ":", column);
  }
  return "default";
}

void DaemonSettings::Add(std::string key, Target target) {
  PL_CHECK(!Has(key)) << "config key " << key << " bound twice";
  settings_.push_back(Setting{std::move(key), target, SettingSource{}});
}

void DaemonSettings::Bind(std::string key, std::string* value) { Add(std::move(key), value); }
void DaemonSettings::Bind(std::string key, bool* value) { Add(std::move(key), value); }
void DaemonSettings::Bind(std::string key, double* value) { Add(std::move(key), value); }
void DaemonSettings::Bind(std::string key, std::vector<std::string>* value) {
  Add(std::move(key), value);
}

const DaemonSettings::Setting* DaemonSettings::Find(absl::string_view key) const {
  for (const Setting& s : settings_) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

DaemonSettings::Setting* DaemonSettings::Find(absl::string_view key) {
  return const_cast<Setting*>(std::as_const(*this).Find(key));
}

std::vector<std::string> DaemonSettings::keys() const {
  std::vector<std::string> out;
  for (const Setting& s : settings_) out.push_back(s.key);
  return out;
}

SettingSource DaemonSettings::source(absl::string_view key) const {
  const Setting* s = Find(key);
  return s ? s->source : SettingSource{};
}

void DaemonSettings::SetFromCommandLine(absl::string_view key, absl::string_view env) {
  Setting* s = Find(key);
  if (s == nullptr) return;
  s->source = env.empty()
                  ? SettingSource{.kind = SettingSource::Kind::kFlag}
                  : SettingSource{.kind = SettingSource::Kind::kEnv, .env = std::string(env)};
}

absl::Status DaemonSettings::ApplyFile(absl::string_view text, absl::string_view file_name) {
  struct Pending {
    Setting* setting;
    Value value;
    yaml_internal::Location loc;
  };
  std::vector<Pending> pending;
  try {
    // A file of comments only (every key commented out) sets nothing.
    yaml_internal::YamlText read = yaml_internal::ReadYaml(text);
    if (!read.error && (read.documents == 0 || (read.documents == 1 && read.root.IsNull()))) {
      return absl::OkStatus();
    }
    Diagnostics diag;
    const std::string what = absl::StrCat(command_, " config");
    std::optional<Field> root = yaml_internal::LoadDocument(text, what, diag);
    if (!root) return diag.ToStatus(file_name);
    std::vector<absl::string_view> known;
    for (const Setting& s : settings_) known.push_back(s.key);
    yaml_internal::MapReader map(*root, known, absl::StrCat("a map of the settings of ", command_),
                                 diag);
    for (const auto& entry : map.entries()) {
      // Named apart: clang before 16 cannot capture a structured binding in a lambda.
      const std::string& key = entry.first;
      const Field& field = entry.second;
      Setting* setting = Find(key);
      PL_CHECK(setting != nullptr) << key;
      std::optional<Value> value =
          std::visit(Overloaded{[&](std::string*) -> std::optional<Value> {
                                  auto v = yaml_internal::ReadString(field, diag);
                                  return v ? std::optional<Value>(std::move(*v)) : std::nullopt;
                                },
                                [&](bool*) -> std::optional<Value> {
                                  auto v = yaml_internal::ReadBool(field, diag);
                                  return v ? std::optional<Value>(*v) : std::nullopt;
                                },
                                [&](double*) -> std::optional<Value> {
                                  auto v = yaml_internal::ReadNumber(field, diag);
                                  return v ? std::optional<Value>(*v) : std::nullopt;
                                },
                                [&](std::vector<std::string>*) -> std::optional<Value> {
                                  auto v = yaml_internal::ReadStringList(field, diag);
                                  return v ? std::optional<Value>(std::move(*v)) : std::nullopt;
                                }},
                     setting->target);
      if (value) pending.push_back(Pending{setting, std::move(*value), field.loc});
    }
    if (!diag.ok()) return diag.ToStatus(file_name);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(file_name, ": reading failed: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(file_name, ": reading failed"));
  }
  // The whole file is good: now fill what the command line left alone.
  for (Pending& p : pending) {
    const SettingSource::Kind kind = p.setting->source.kind;
    if (kind == SettingSource::Kind::kFlag || kind == SettingSource::Kind::kEnv) continue;
    std::visit(Overloaded{[&](std::string* t) { *t = std::get<std::string>(p.value); },
                          [&](bool* t) { *t = std::get<bool>(p.value); },
                          [&](double* t) { *t = std::get<double>(p.value); },
                          [&](std::vector<std::string>* t) {
                            *t = std::get<std::vector<std::string>>(p.value);
                          }},
               p.setting->target);
    p.setting->source = SettingSource{.kind = SettingSource::Kind::kFile,
                                      .file = std::string(file_name),
                                      .line = p.loc.line,
                                      .column = p.loc.column};
  }
  return absl::OkStatus();
}

absl::Status DaemonSettings::ApplyFileAt(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read the config file: ",
                     ec ? ec.message()
                        : (std::filesystem::exists(path) ? "not a regular file" : "no such file")));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the config file is ", size, " bytes; expected at most 1 MiB"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot read the config file: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat(path, ": reading the config file failed"));
  }
  return ApplyFile(text.str(), path);
}

std::string DaemonSettings::Print() const {
  std::vector<std::pair<std::string, std::string>> lines;  // "key: value", its source
  for (const Setting& s : settings_) {
    std::string value =
        std::visit(Overloaded{[](const std::string* v) { return Scalar(*v); },
                              [](const bool* v) { return std::string(*v ? "true" : "false"); },
                              [](const double* v) { return yaml_internal::FormatNumber(*v); },
                              [](const std::vector<std::string>* v) {
                                std::vector<std::string> items;
                                for (const std::string& item : *v)
                                  items.push_back(Scalar(item, true));
                                return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
                              }},
                   s.target);
    lines.emplace_back(absl::StrCat(s.key, ": ", value), s.source.ToString());
  }
  size_t width = 0;
  for (const auto& [line, source] : lines)
    width = std::max(width, std::min<size_t>(line.size(), 48));
  std::string out = absl::StrCat(
      "# ", command_, ": the effective configuration. After each value, where it came from:\n",
      "# a flag, an environment variable, the config file (FILE:LINE:COLUMN) or the default.\n");
  for (const auto& [line, source] : lines) {
    absl::StrAppend(&out, line, std::string(width > line.size() ? width - line.size() : 0, ' '),
                    "  # ", source, "\n");
  }
  return out;
}

absl::Status DaemonSettings::Locate(const absl::Status& status) const {
  absl::string_view message = status.message();
  if (!absl::ConsumePrefix(&message, "--")) return status;
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos) return status;
  const Setting* s = Find(message.substr(0, colon));
  if (s == nullptr || s->source.kind != SettingSource::Kind::kFile) return status;
  return absl::Status(status.code(), absl::StrCat(s->source.file, ":", s->source.line, ":",
                                                  s->source.column, ": ", message));
}

}  // namespace paceline::cli
