#pragma once
// Strict reading of YAML nodes (yaml_tree.h) for the spec parsers. Internal to src/spec and the
// readers built on it (yaml_tree.h).
//
// Every reader takes a Field (a node, its place in the file, its field path) and either returns
// the value or records an error in Diagnostics and returns nullopt, so one pass over a spec
// collects every problem. Errors read "PATH: what is wrong; expected ...". Rules:
//   - maps: every key known (unknown keys get a "did you mean" hint), no key twice, string keys;
//   - scalars: no YAML tags (!!str, !custom); null ("key:" with no value, ~, null) is an error;
//   - booleans are exactly `true` or `false`, integers are plain decimal (no quotes, no leading
//     zeros, no 0x, no 1e3, no _), numbers are plain decimal; quantities and durations may be
//     quoted ("500m", '2Gi') and use the rules of common/units.h.
// Diagnostics also records where each field path sits so that errors found later on the built
// struct (spec_validation.h) can be located.
//
// The readers never throw.
//
// Thread-safety: a Diagnostics is used by one thread.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/resources.h"
#include "spec/spec_validation.h"
#include "spec/yaml_tree.h"

namespace paceline::yaml_internal {

struct Location {
  int line = 1;  // 1-based
  int column = 1;
};
Location ToLocation(const Mark& mark);

class Diagnostics {
 public:
  // Records an error; the very same error (place, path and message) only once.
  void Error(Location loc, std::string path, std::string message);
  // Remembers where `path` is in the file (the first record wins).
  void Record(const std::string& path, Location loc);
  // Adds errors of a validator, each at the nearest recorded path. Drops an error when a parse
  // error already concerns the same field (or a part or parent of it) or a field it depends on.
  // `under`: the path of the spec inside a larger document (embedded_spec.h); the validator's
  // paths are relative to it.
  void AddValidationErrors(const std::vector<FieldError>& errors, absl::string_view under = "");
  bool ok() const { return errors_.empty(); }
  // INVALID_ARGUMENT listing every error, one per line, sorted by position:
  // "FILE:LINE:COLUMN: PATH: message".
  absl::Status ToStatus(absl::string_view file_name) const;

 private:
  struct Entry {
    Location loc;
    std::string path;
    std::string message;
  };
  bool Touched(absl::string_view path) const;
  Location Find(std::string path) const;

  std::vector<Entry> errors_;
  absl::flat_hash_set<std::string> seen_;  // "LINE:COLUMN:PATH:MESSAGE" of errors_
  absl::flat_hash_map<std::string, Location> locations_;
};

struct Field {
  Node node;
  Location loc;  // where the value starts; the key's place when the value is empty
  std::string path;
};

// How a map's keys are matched against its known keys: exactly, or folded, where case and '_'
// are ignored (instanceCount, instancecount and instance_count are one key, as Peloton's files
// spell them; src/peloton). A folded key is known by its known spelling: in entries(), Get()
// and field paths.
enum class KeyMatch { kExact, kFolded };
// A key as kFolded compares it: lower case, without '_' ("instance_count" -> "instancecount").
std::string FoldKey(absl::string_view key);

// A YAML map read strictly. Construction checks the node is a map, records unknown keys,
// duplicate keys and non-string keys as errors, and records the place of every field.
class MapReader {
 public:
  // Known keys only; `expected` describes the map ("a map with the keys of a job spec").
  MapReader(const Field& field, std::span<const absl::string_view> known_keys,
            absl::string_view expected, Diagnostics& diag, KeyMatch match = KeyMatch::kExact);
  // Any string keys (labels, env): `expected` describes the map.
  MapReader(const Field& field, absl::string_view expected, Diagnostics& diag);

  bool ok() const { return ok_; }  // the node was a map
  const Field& field() const { return field_; }
  std::optional<Field> Get(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Get(key).has_value(); }
  // Get, recording "PATH.key: is required; expected ..." when a readable map lacks the key.
  std::optional<Field> Require(absl::string_view key, absl::string_view expected);
  // The entries in document order (first of duplicates only).
  const std::vector<std::pair<std::string, Field>>& entries() const { return entries_; }

 private:
  void Read(std::span<const absl::string_view> known_keys, bool free_keys, KeyMatch match,
            absl::string_view expected);

  Field field_;
  Diagnostics& diag_;
  bool ok_ = false;
  std::vector<std::pair<std::string, Field>> entries_;
};

// Scalar readers: nullopt after recording an error.
std::optional<std::string> ReadString(const Field& f, Diagnostics& diag);
std::optional<bool> ReadBool(const Field& f, Diagnostics& diag);
std::optional<int64_t> ReadInt(const Field& f, int64_t min, int64_t max, Diagnostics& diag);
std::optional<double> ReadNumber(const Field& f, Diagnostics& diag);
std::optional<absl::Duration> ReadDuration(const Field& f, Diagnostics& diag);
std::optional<int64_t> ReadQuantity(const Field& f, Dim dim, Diagnostics& diag);
// One of `names` (e.g. batch|service|...); returns its index.
std::optional<size_t> ReadEnum(const Field& f, std::span<const absl::string_view> names,
                               Diagnostics& diag);
// The items of a sequence as Fields named PATH[i].
std::optional<std::vector<Field>> ReadSequence(const Field& f, absl::string_view expected,
                                               Diagnostics& diag);
std::optional<std::vector<std::string>> ReadStringList(const Field& f, Diagnostics& diag);
std::optional<std::map<std::string, std::string>> ReadStringMap(const Field& f,
                                                                absl::string_view expected,
                                                                Diagnostics& diag);

// The scalar text of a node if it is a plain or quoted scalar without a tag; else records the
// error (with `expected`) and returns nullopt.
std::optional<std::string> ScalarText(const Field& f, absl::string_view expected,
                                      Diagnostics& diag);
// A finite decimal number ("0.5", "10", "-3", "1e3"); nullopt for anything else.
std::optional<double> ParseNumberText(absl::string_view text);
// Shortest text that parses back to exactly `v` ("0.5", "12.25", "1e-05").
std::string FormatNumber(double v);

// Parses exactly one YAML document whose top level is a map. `what` names the spec kind
// ("job spec"). Records syntax errors (with libyaml's message and position), empty input,
// several documents and a non-map top level.
std::optional<Field> LoadDocument(absl::string_view text, absl::string_view what,
                                  Diagnostics& diag);

// The frame of every spec parser: loads the document, reads it with `read(root, diag)`, adds
// the semantic errors of `validate(spec)`, and turns any exception (a bad_alloc) into an error,
// so that no exception ever leaves a parse function.
template <typename Spec, typename Read, typename Validate>
absl::StatusOr<Spec> ParseSpecDocument(absl::string_view yaml_text, absl::string_view file_name,
                                       absl::string_view what, Read read, Validate validate) {
  Diagnostics diag;
  try {
    std::optional<Field> root = LoadDocument(yaml_text, what, diag);
    if (!root) return diag.ToStatus(file_name);
    Spec spec = read(*root, diag);
    diag.AddValidationErrors(validate(spec));
    if (!diag.ok()) return diag.ToStatus(file_name);
    return spec;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(file_name, ": parsing failed: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(file_name, ": parsing failed"));
  }
}

// A short, escaped rendering of user text for messages: 'abc' (cut at 40 characters).
std::string Quote(absl::string_view text);

}  // namespace paceline::yaml_internal
