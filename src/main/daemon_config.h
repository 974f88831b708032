#pragma once
// DaemonSettings: the settings of a daemon command (`paceline master`, `agent`, `up`) with their
// config file (docs/operations.md, "Configuration files").
//
// Each flag of the command is bound, under its long name without the dashes ("data-dir"), to
// the variable CLI11 fills from the command line. After the command line is parsed, the caller
// marks what it gave (SetFromCommandLine); ApplyFile then fills every other bound variable that
// the file names, and Print shows the effective value of each with where it came from. The
// precedence is: a flag (or its environment variable) over the file over the built-in default.
//
// The file is one YAML map, read strictly with the spec parsers' readers (spec/yaml_reader.h),
// and with their error style, "FILE:LINE:COLUMN: KEY: what is wrong; expected ...":
//   - every key is a bound name, exactly as the flag spells it (an unknown key, or a typo such
//     as data_dir, is refused with a "did you mean"); no key twice; no YAML tags;
//   - a string flag takes a scalar (`cpu: 4`, `store: ""`); a switch takes `true` or `false`; a
//     number takes a plain decimal number; a repeatable flag takes a list (`label: [a=b]`);
//   - a file that holds only comments sets nothing.
// A file with any error changes no variable: every problem is reported at once. What the value
// means (a duration, an address) is checked by the command, as for a flag; Locate points such
// an error at the file's line when the value came from there.
//
// Print writes YAML that ApplyFile reads back to the same values: one line per key in the
// order they were bound, its source as a comment ("default", "flag", "env NAME",
// "FILE:LINE:COLUMN").
//
// Thread-safety: one thread (the command line's).

#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline::cli {

// Where a setting's value came from.
struct SettingSource {
  enum class Kind { kDefault, kFlag, kEnv, kFile };
  Kind kind = Kind::kDefault;
  std::string env;   // kEnv: the variable's name
  std::string file;  // kFile: the file's name as given
  int line = 0;      // kFile: 1-based
  int column = 0;
  // "default", "flag", "env NAME" or "FILE:LINE:COLUMN".
  std::string ToString() const;
};

class DaemonSettings {
 public:
  // `command` names the daemon in Print's heading ("paceline master").
  explicit DaemonSettings(std::string command) : command_(std::move(command)) {}
  DaemonSettings(const DaemonSettings&) = delete;
  DaemonSettings& operator=(const DaemonSettings&) = delete;

  // Binds `key` (a long flag's name without "--") to the variable its flag fills; the variable
  // must outlive this object. Each key is bound once (a second Bind crashes: a programming
  // error). Its type follows the variable: a string, a switch, a number or a list.
  void Bind(std::string key, std::string* value);
  void Bind(std::string key, bool* value);
  void Bind(std::string key, double* value);
  void Bind(std::string key, std::vector<std::string>* value);
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }
  std::vector<std::string> keys() const;  // in the order they were bound

  // The command line set `key` (its flag, or its environment variable `env` when not empty):
  // the file leaves it alone. A key that is not bound is ignored.
  void SetFromCommandLine(absl::string_view key, absl::string_view env = "");

  // Reads a config file's text (see the header comment) and fills the variables it names that
  // the command line did not set. INVALID_ARGUMENT listing every error as
  // "FILE:LINE:COLUMN: KEY: message" (nothing changed), or OK. `file_name` labels the errors and
  // the sources. Never throws.
  absl::Status ApplyFile(absl::string_view text, absl::string_view file_name);
  // Reads the file at `path` and applies it; an unreadable file is an error naming the path.
  absl::Status ApplyFileAt(const std::string& path);

  // The effective configuration as YAML (see the header comment).
  std::string Print() const;

  // `status` placed in the config file when its message is "--KEY: ..." and KEY's value came
  // from the file: "FILE:LINE:COLUMN: KEY: ...". Any other status comes back unchanged.
  absl::Status Locate(const absl::Status& status) const;

  // Where `key`'s value came from (a default for a key that is not bound).
  SettingSource source(absl::string_view key) const;

 private:
  using Target = std::variant<std::string*, bool*, double*, std::vector<std::string>*>;
  struct Setting {
    std::string key;
    Target target;
    SettingSource source;
  };
  const Setting* Find(absl::string_view key) const;
  Setting* Find(absl::string_view key);
  void Add(std::string key, Target target);

  std::string command_;
  std::vector<Setting> settings_;
};

}  // namespace paceline::cli
