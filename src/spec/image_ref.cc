#include "spec/image_ref.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paceline::spec {
namespace {

constexpr absl::string_view kDefaultRegistry = "docker.io";
constexpr size_t kMaxRepository = 255;
constexpr size_t kMaxTag = 128;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A path component: [a-z0-9]+ joined by '.', '_', '__' or one or more '-'.
bool IsComponent(absl::string_view c) {
  if (c.empty() || !IsLowerAlnum(c.front()) || !IsLowerAlnum(c.back())) return false;
  for (size_t i = 0; i < c.size(); ++i) {
    if (IsLowerAlnum(c[i])) continue;
    if (c[i] == '-') continue;
    if (c[i] == '.' || c[i] == '_') {
      bool double_underscore = c[i] == '_' && i + 1 < c.size() && c[i + 1] == '_';
      if (double_underscore) ++i;
      if (!IsLowerAlnum(c[i + 1])) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool IsTag(absl::string_view t) {
  if (t.empty() || t.size() > kMaxTag) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    bool word = absl::ascii_isalnum(c) || c == '_';
    if (!(word || (i > 0 && (c == '.' || c == '-')))) return false;
  }
  return true;
}

// A registry host: letters, digits, '.', '-', an optional ":port", or a bracketed IPv6.
bool IsRegistryHost(absl::string_view h) {
  if (h.empty()) return false;
  for (char c : h) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']')) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool IsSha256Digest(absl::string_view digest) {
  if (!absl::StartsWith(digest, "sha256:") || digest.size() != 7 + 64) return false;
  for (char c : digest.substr(7)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string ImageRef::ToString() const {
  std::string out = absl::StrCat(registry, "/", repository);
  if (!tag.empty()) absl::StrAppend(&out, ":", tag);
  if (!digest.empty()) absl::StrAppend(&out, "@", digest);
  return out;
}

absl::StatusOr<ImageRef> ParseImageRef(absl::string_view text) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("image reference \"", text, "\": ", what));
  };
  if (text.empty()) return bad("empty; expected [REGISTRY/]REPOSITORY[:TAG][@sha256:HEX]");
  ImageRef ref;
  absl::string_view rest = text;
  if (size_t at = rest.find('@'); at != absl::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    if (!IsSha256Digest(ref.digest)) {
      return bad("the digest after '@' must be sha256: and 64 lower-case hex digits");
    }
    rest = rest.substr(0, at);
  }
  // The first component is a registry when it has a '.' or ':' or is "localhost".
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    absl::string_view first = rest.substr(0, slash);
    if (absl::StrContains(first, '.') || absl::StrContains(first, ':') || first == "localhost") {
      if (!IsRegistryHost(first)) return bad(absl::StrCat("\"", first, "\" is not a host[:port]"));
      ref.registry = std::string(first);
      rest = rest.substr(slash + 1);
    }
  }
  // A tag is after the last ':' that follows the last '/'.
  size_t last_slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos &&
      (last_slash == absl::string_view::npos || colon > last_slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    if (!IsTag(ref.tag)) {
      return bad(absl::StrCat("tag \"", ref.tag,
                              "\" must be letters, digits, '_', '.' or '-' (not first), at most ",
                              kMaxTag, " characters"));
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("no repository name");
  if (rest.size() > kMaxRepository) {
    return bad(absl::StrCat("the repository name is longer than ", kMaxRepository, " characters"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  for (absl::string_view p : parts) {
    if (!IsComponent(p)) {
      return bad(absl::StrCat("repository component \"", p,
                              "\" must be lower-case letters and digits, separated by '.', '_', "
                              "'__' or '-'"));
    }
  }
  ref.repository = std::string(rest);
  if (ref.registry.empty()) {
    ref.registry = std::string(kDefaultRegistry);
    if (parts.size() == 1) ref.repository = absl::StrCat("library/", ref.repository);
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

}  // namespace paceline::spec
