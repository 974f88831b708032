// The reading helpers of the Peloton converters (peloton_internal.h).

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "peloton/peloton_internal.h"
#include "spec/did_you_mean.h"

namespace paceline::peloton {

void Context::Warn(const Field& f, std::string message) {
  // A default field's warning is reached again for each instanceConfig entry.
  if (!seen_.insert(absl::StrCat(f.loc.line, ":", f.loc.column, ":", message)).second) return;
  warnings_.push_back(Entry{f.loc, f.path, std::move(message)});
}

std::vector<std::string> Context::Warnings(absl::string_view file_name) const {
  std::vector<Entry> sorted = warnings_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.loc.line, a.loc.column) < std::tie(b.loc.line, b.loc.column);
  });
  std::vector<std::string> out;
  for (const Entry& e : sorted) {
    out.push_back(absl::StrCat(file_name, ":", e.loc.line, ":", e.loc.column, ": ", e.path,
                               e.path.empty() ? "" : ": ", e.message));
  }
  return out;
}

MapReader PelotonMap(const Field& f, std::span<const absl::string_view> keys,
                     absl::string_view expected, Context& ctx) {
  return MapReader(f, keys, expected, ctx.diag, yaml_internal::KeyMatch::kFolded);
}

std::optional<Field> Present(const MapReader& m, absl::string_view key) {
  std::optional<Field> f = m.Get(key);
  if (!f || f->node.IsNull()) return std::nullopt;
  if (f->node.IsSequence() && f->node.size() == 0) return std::nullopt;
  return f;
}

std::optional<size_t> ReadPelotonEnum(const Field& f, std::span<const absl::string_view> names,
                                      Context& ctx) {
  std::vector<std::string> valid;
  std::vector<absl::string_view> valid_names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    valid.push_back(absl::StrCat(i, " (", names[i], ")"));
    valid_names.push_back(names[i]);
  }
  const std::string expected = absl::StrCat("expected one of: ", absl::StrJoin(valid, ", "));
  std::optional<std::string> text = yaml_internal::ScalarText(f, expected, ctx.diag);
  if (!text) return std::nullopt;
  uint32_t number = 0;
  if (!text->empty() && std::all_of(text->begin(), text->end(), absl::ascii_isdigit) &&
      absl::SimpleAtoi(*text, &number)) {
    if (number < names.size() && !names[number].empty()) return number;
    ctx.diag.Error(f.loc, f.path, absl::StrCat(number, " is not a value of this enum; ", expected));
    return std::nullopt;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].empty() && names[i] == *text) return i;
  }
  std::string hint;
  if (auto close = ClosestMatch(*text, valid_names)) {
    hint = absl::StrCat(" (did you mean '", *close, "'?)");
  }
  ctx.diag.Error(f.loc, f.path,
                 absl::StrCat(yaml_internal::Quote(*text), " is not valid", hint, "; ", expected));
  return std::nullopt;
}

std::optional<int64_t> ScaleExactly(const Field& f, double value, int64_t scale,
                                    absl::string_view unit, Context& ctx) {
  const double scaled = value * static_cast<double>(scale);
  constexpr double kMax = 9.0e15;  // well inside int64 and exact in a double
  if (!std::isfinite(scaled) || scaled < 0 || scaled > kMax) {
    ctx.diag.Error(f.loc, f.path,
                   absl::StrCat(yaml_internal::FormatNumber(value),
                                " is out of range; expected a number from 0"));
    return std::nullopt;
  }
  const double whole = std::round(scaled);
  if (std::fabs(scaled - whole) > 1e-9 * std::max(1.0, whole)) {
    const std::string written =
        f.node.IsScalar() ? f.node.Scalar() : yaml_internal::FormatNumber(value);
    ctx.diag.Error(f.loc, f.path,
                   absl::StrCat(written, " is not a whole number of ", unit, " (",
                                yaml_internal::FormatNumber(scaled), "); Paceline counts in ", unit,
                                ": round it"));
    return std::nullopt;
  }
  return static_cast<int64_t>(whole);
}

std::string ShellQuote(absl::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '/' || c == '=' || c == ':' || c == ',' || c == '+' || c == '@';
  });
  if (plain) return std::string(text);
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

}  // namespace paceline::peloton
