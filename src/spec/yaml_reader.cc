// Strict readers over YAML nodes (see yaml_reader.h).

#include "spec/yaml_reader.h"

#include <charconv>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/units.h"
#include "spec/did_you_mean.h"
#include "spec/field_path.h"

namespace paceline::yaml_internal {
namespace {

absl::string_view Shape(const Node& n) {
  switch (n.kind()) {
    case Node::Kind::kSequence:
      return "is a list";
    case Node::Kind::kMap:
      return "is a map";
    case Node::Kind::kScalar:
      return "is a single value";
    case Node::Kind::kNull:
      return "has no value";
    case Node::Kind::kUndefined:
      break;
  }
  return "is missing";
}

bool HasExplicitTag(const Node& n) { return !n.Tag().empty(); }

void TagError(const Field& f, Diagnostics& diag) {
  diag.Error(f.loc, f.path,
             absl::StrCat("has the YAML tag ", Quote(f.node.Tag()),
                          "; tags are not supported, remove it"));
}

// units.h messages start with "cpu: ", "size: ", "gpu: " or "duration: "; the field path
// already says which field it is.
std::string StripUnitPrefix(absl::string_view message) {
  for (absl::string_view p : {"cpu: ", "size: ", "gpu: ", "duration: "}) {
    if (absl::StartsWith(message, p)) return std::string(message.substr(p.size()));
  }
  return std::string(message);
}

// Whether a node is a scalar we may read a non-string value from; records the error if not.
std::optional<std::string> PlainScalar(const Field& f, absl::string_view expected,
                                       Diagnostics& diag) {
  std::optional<std::string> text = ScalarText(f, expected, diag);
  if (text && f.node.quoted()) {
    diag.Error(f.loc, f.path,
               absl::StrCat(Quote(*text), " is quoted, which makes it a string; ", expected,
                            " (remove the quotes)"));
    return std::nullopt;
  }
  return text;
}

}  // namespace

std::string Quote(absl::string_view text) {
  constexpr size_t kMax = 40;
  return absl::StrCat("'", absl::Utf8SafeCHexEscape(text.substr(0, kMax)),
                      text.size() > kMax ? "...'" : "'");
}

std::optional<double> ParseNumberText(absl::string_view text) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::string FormatNumber(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return absl::StrCat(v);
  return std::string(buf, end);
}

MapReader::MapReader(const Field& field, std::span<const absl::string_view> known_keys,
                     absl::string_view expected, Diagnostics& diag, KeyMatch match)
    : field_(field), diag_(diag) {
  Read(known_keys, /*free_keys=*/false, match, expected);
}

MapReader::MapReader(const Field& field, absl::string_view expected, Diagnostics& diag)
    : field_(field), diag_(diag) {
  Read({}, /*free_keys=*/true, KeyMatch::kExact, expected);
}

std::string FoldKey(absl::string_view key) {
  std::string out;
  for (char c : key) {
    if (c != '_') out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

namespace {

// The known key that `name` stands for, or nullopt.
std::optional<absl::string_view> KnownKey(const std::string& name,
                                          std::span<const absl::string_view> known_keys,
                                          KeyMatch match) {
  for (absl::string_view k : known_keys) {
    if (k == name) return k;
  }
  if (match == KeyMatch::kFolded) {
    const std::string folded = FoldKey(name);
    for (absl::string_view k : known_keys) {
      if (FoldKey(k) == folded) return k;
    }
  }
  return std::nullopt;
}

}  // namespace

void MapReader::Read(std::span<const absl::string_view> known_keys, bool free_keys, KeyMatch match,
                     absl::string_view expected) {
  diag_.Record(field_.path, field_.loc);
  if (HasExplicitTag(field_.node)) return TagError(field_, diag_);
  if (!field_.node.IsMap()) {
    diag_.Error(field_.loc, field_.path, absl::StrCat(Shape(field_.node), "; ", expected));
    return;
  }
  ok_ = true;
  absl::flat_hash_map<std::string, int> first_line;
  for (size_t i = 0; i < field_.node.size(); ++i) {
    const Node key = field_.node.key(i);
    const Node value = field_.node.value(i);
    Location key_loc = ToLocation(key.mark());
    if (!key.IsScalar()) {
      diag_.Error(key_loc, field_.path,
                  absl::StrCat("has a key that ", Shape(key), "; keys must be plain names"));
      continue;
    }
    std::string name = key.Scalar();
    std::optional<absl::string_view> known;
    if (!free_keys) {
      known = KnownKey(name, known_keys, match);
      if (known) name = std::string(*known);
    }
    std::string path = ChildPath(field_.path, name);
    auto [first, inserted] = first_line.emplace(name, key_loc.line);
    if (!inserted) {
      const std::string spelled =
          key.Scalar() == name ? "" : absl::StrCat(" as ", Quote(key.Scalar()));
      diag_.Error(key_loc, path,
                  absl::StrCat("duplicate key ", Quote(name), spelled, " (first at line ",
                               first->second, "); each key may appear only once"));
      continue;
    }
    if (!free_keys && !known) {
      std::string hint;
      if (name == "<<") {
        hint = " (YAML merge keys are not supported; write the keys out)";
      } else if (auto close = ClosestMatch(name, known_keys)) {
        hint = absl::StrCat(" (did you mean '", *close, "'?)");
      }
      diag_.Error(key_loc, path,
                  absl::StrCat("unknown key ", Quote(name), hint,
                               "; expected one of: ", absl::StrJoin(known_keys, ", ")));
      continue;
    }
    Location loc = value.IsNull() ? key_loc : ToLocation(value.mark());
    if (loc.line < key_loc.line) loc = key_loc;  // an alias points back at its anchor
    diag_.Record(path, loc);
    entries_.emplace_back(name, Field{value, loc, path});
  }
}

std::optional<Field> MapReader::Get(absl::string_view key) const {
  for (const auto& [name, f] : entries_) {
    if (name == key) return f;
  }
  return std::nullopt;
}

std::optional<Field> MapReader::Require(absl::string_view key, absl::string_view expected) {
  std::optional<Field> f = Get(key);
  if (!f && ok_) {
    diag_.Error(field_.loc, ChildPath(field_.path, key), absl::StrCat("is required; ", expected));
  }
  return f;
}

std::optional<std::string> ScalarText(const Field& f, absl::string_view expected,
                                      Diagnostics& diag) {
  if (HasExplicitTag(f.node)) {
    TagError(f, diag);
    return std::nullopt;
  }
  if (!f.node.IsScalar()) {
    diag.Error(f.loc, f.path, absl::StrCat(Shape(f.node), "; ", expected));
    return std::nullopt;
  }
  return f.node.Scalar();
}

std::optional<std::string> ReadString(const Field& f, Diagnostics& diag) {
  return ScalarText(f, "expected a string", diag);
}

std::optional<bool> ReadBool(const Field& f, Diagnostics& diag) {
  constexpr absl::string_view kExpected = "expected true or false";
  std::optional<std::string> text = PlainScalar(f, kExpected, diag);
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  diag.Error(f.loc, f.path, absl::StrCat(Quote(*text), " is not a boolean; ", kExpected));
  return std::nullopt;
}

std::optional<int64_t> ReadInt(const Field& f, int64_t min, int64_t max, Diagnostics& diag) {
  std::string expected = absl::StrCat("expected a whole number from ", min, " to ", max);
  std::optional<std::string> text = PlainScalar(f, expected, diag);
  if (!text) return std::nullopt;
  absl::string_view digits = *text;
  bool negative = absl::ConsumePrefix(&digits, "-");
  bool well_formed = !digits.empty() && digits.size() <= 19 &&
                     (digits.size() == 1 || digits[0] != '0') &&
                     std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit);
  if (!well_formed) {
    diag.Error(f.loc, f.path, absl::StrCat(Quote(*text), " is not a whole number; ", expected));
    return std::nullopt;
  }
  uint64_t magnitude = 0;
  for (char c : digits) magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  // Compare in __int128: magnitude may exceed int64 even with 19 digits.
  __int128 v = negative ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
  if (v < min || v > max) {
    diag.Error(f.loc, f.path, absl::StrCat(*text, " is out of range; ", expected));
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

std::optional<double> ReadNumber(const Field& f, Diagnostics& diag) {
  constexpr absl::string_view kExpected = "expected a number such as 1, 2.5 or -3";
  std::optional<std::string> text = PlainScalar(f, kExpected, diag);
  if (!text) return std::nullopt;
  std::optional<double> v = ParseNumberText(*text);
  if (!v) diag.Error(f.loc, f.path, absl::StrCat(Quote(*text), " is not a number; ", kExpected));
  return v;
}

std::optional<absl::Duration> ReadDuration(const Field& f, Diagnostics& diag) {
  std::optional<std::string> text =
      ScalarText(f, "expected a duration such as 30s, 5m, 2h or 1h30m", diag);
  if (!text) return std::nullopt;
  absl::StatusOr<absl::Duration> d = ParseDurationStrict(*text);
  if (!d.ok()) {
    diag.Error(f.loc, f.path, StripUnitPrefix(d.status().message()));
    return std::nullopt;
  }
  return *d;
}

std::optional<int64_t> ReadQuantity(const Field& f, Dim dim, Diagnostics& diag) {
  absl::string_view expected = dim == Dim::kCpu   ? "expected cores such as 0.5 or 2, or 500m"
                               : dim == Dim::kGpu ? "expected whole GPUs such as 1 or a fraction "
                                                    "such as 0.5"
                                                  : "expected a size such as 512Mi or 2Gi";
  std::optional<std::string> text = ScalarText(f, expected, diag);
  if (!text) return std::nullopt;
  absl::StatusOr<int64_t> v = ParseQuantity(dim, *text);
  if (!v.ok()) {
    diag.Error(f.loc, f.path, StripUnitPrefix(v.status().message()));
    return std::nullopt;
  }
  return *v;
}

std::optional<size_t> ReadEnum(const Field& f, std::span<const absl::string_view> names,
                               Diagnostics& diag) {
  std::string expected = absl::StrCat("expected one of: ", absl::StrJoin(names, ", "));
  std::optional<std::string> text = ScalarText(f, expected, diag);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *text) return i;
  }
  std::string hint;
  if (auto close = ClosestMatch(*text, names))
    hint = absl::StrCat(" (did you mean '", *close, "'?)");
  diag.Error(f.loc, f.path, absl::StrCat(Quote(*text), " is not valid", hint, "; ", expected));
  return std::nullopt;
}

std::optional<std::vector<Field>> ReadSequence(const Field& f, absl::string_view expected,
                                               Diagnostics& diag) {
  if (HasExplicitTag(f.node)) {
    TagError(f, diag);
    return std::nullopt;
  }
  if (!f.node.IsSequence()) {
    diag.Error(f.loc, f.path, absl::StrCat(Shape(f.node), "; ", expected));
    return std::nullopt;
  }
  std::vector<Field> items;
  for (size_t i = 0; i < f.node.size(); ++i) {
    const Node item = f.node.item(i);
    Location loc = item.IsNull() ? f.loc : ToLocation(item.mark());
    if (loc.line < f.loc.line) loc = f.loc;  // an alias points back at its anchor
    items.push_back(Field{item, loc, IndexPath(f.path, items.size())});
    diag.Record(items.back().path, loc);
  }
  return items;
}

std::optional<std::vector<std::string>> ReadStringList(const Field& f, Diagnostics& diag) {
  auto items = ReadSequence(f, "expected a list of strings such as [a, b]", diag);
  if (!items) return std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  for (const Field& item : *items) {
    std::optional<std::string> s = ReadString(item, diag);
    ok &= s.has_value();
    if (s) out.push_back(std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::map<std::string, std::string>> ReadStringMap(const Field& f,
                                                                absl::string_view expected,
                                                                Diagnostics& diag) {
  MapReader map(f, expected, diag);
  if (!map.ok()) return std::nullopt;
  std::map<std::string, std::string> out;
  bool ok = true;
  for (const auto& [key, value] : map.entries()) {
    std::optional<std::string> s = ReadString(value, diag);
    ok &= s.has_value();
    if (s) out.emplace(key, std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace paceline::yaml_internal
