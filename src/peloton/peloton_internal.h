#pragma once
// Shared by the Peloton converters (internal to src/peloton): the reading context with its
// warnings, folded-key maps, Peloton's enums, and exact unit conversion.
//
// Thread-safety: a Context is used by one thread.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "peloton/peloton.h"
#include "spec/job_spec.h"
#include "spec/yaml_reader.h"

namespace paceline::peloton {

using yaml_internal::Diagnostics;
using yaml_internal::Field;
using yaml_internal::Location;
using yaml_internal::MapReader;

// The errors (in the caller's Diagnostics) and the warnings of one conversion.
class Context {
 public:
  explicit Context(Diagnostics& d) : diag(d) {}
  Diagnostics& diag;
  void Warn(const Field& f, std::string message);
  // "FILE:LINE:COLUMN: PATH: message", sorted by position, each once.
  std::vector<std::string> Warnings(absl::string_view file_name) const;

 private:
  struct Entry {
    Location loc;
    std::string path;
    std::string message;
  };
  std::vector<Entry> warnings_;
  absl::flat_hash_set<std::string> seen_;  // "LINE:COLUMN:MESSAGE" of warnings_
};

// The frame of both converters: reads the document with `read(root, ctx)`, validates the spec
// with `validate`, and returns it with the warnings (errors as yaml_spec.h).
template <typename Spec, typename Read, typename Validate>
absl::StatusOr<Converted<Spec>> ConvertDocument(absl::string_view yaml_text,
                                                absl::string_view file_name, absl::string_view what,
                                                Read read, Validate validate) {
  std::vector<std::string> warnings;
  absl::StatusOr<Spec> spec = yaml_internal::ParseSpecDocument<Spec>(
      yaml_text, file_name, what,
      [&](const Field& root, Diagnostics& diag) {
        Context ctx(diag);
        Spec s = read(root, ctx);
        warnings = ctx.Warnings(file_name);
        return s;
      },
      validate);
  if (!spec.ok()) return spec.status();
  return Converted<Spec>{*std::move(spec), std::move(warnings)};
}

// The keys of a Peloton label ({key: ..., value: ...}), in tasks' labels and constraints.
inline constexpr std::array<absl::string_view, 2> kLabelKeys = {"key", "value"};

// A map of a Peloton config: its keys matched with case and '_' folded.
MapReader PelotonMap(const Field& f, std::span<const absl::string_view> keys,
                     absl::string_view expected, Context& ctx);
// The field of `key` unless it is absent, null or an empty list (Peloton's "not set").
std::optional<Field> Present(const MapReader& m, absl::string_view key);

// A Peloton enum: its number (an index into `names`) or its name. `names[i]` is the name of
// value i; an empty name is a value that does not exist.
std::optional<size_t> ReadPelotonEnum(const Field& f, std::span<const absl::string_view> names,
                                      Context& ctx);

// Exact conversions of Peloton's doubles: `value * scale` must be a whole number (within
// 1e-9 of one) in [0, max]; else an error naming the unit (`unit` e.g. "millicores").
std::optional<int64_t> ScaleExactly(const Field& f, double value, int64_t scale,
                                    absl::string_view unit, Context& ctx);
inline constexpr int64_t kMiB = int64_t{1} << 20;

// A shell word: 'text' with every ' written as '\''; plain words stay as they are.
std::string ShellQuote(absl::string_view text);

}  // namespace paceline::peloton
