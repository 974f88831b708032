#include "image/oci_types.h"

#include <sys/utsname.h>

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "nlohmann/json.hpp"
#include "spec/image_ref.h"

namespace paceline::image {
namespace {

using nlohmann::json;

// Where a value sits in a document, for error messages: "manifest: layers[2].digest: ...".
class Field {
 public:
  explicit Field(absl::string_view document) : document_(document) {}
  Field operator[](absl::string_view key) const {
    return Field(document_, path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key));
  }
  Field operator[](size_t i) const { return Field(document_, absl::StrCat(path_, "[", i, "]")); }
  absl::Status Error(absl::string_view what) const {
    if (path_.empty()) return absl::InvalidArgumentError(absl::StrCat(document_, ": ", what));
    return absl::InvalidArgumentError(absl::StrCat(document_, ": ", path_, ": ", what));
  }

 private:
  Field(absl::string_view document, std::string path)
      : document_(document), path_(std::move(path)) {}
  std::string document_;
  std::string path_;
};

absl::Status TypeError(const Field& at, absl::string_view expected, const json& got) {
  return at.Error(absl::StrCat("expected ", expected, ", got ", got.type_name()));
}

absl::StatusOr<json> ParseDocument(absl::string_view text, const Field& at) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return at.Error("not valid JSON");
  if (!j.is_object()) return TypeError(at, "a JSON object", j);
  return j;
}

// The member `key` of object `j`, or nullptr when absent or null.
const json* Member(const json& j, absl::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::string> RequiredString(const json& j, absl::string_view key, const Field& at) {
  const json* v = Member(j, key);
  if (v == nullptr) return at[key].Error("required");
  if (!v->is_string()) return TypeError(at[key], "a string", *v);
  return v->get<std::string>();
}

absl::StatusOr<std::string> OptionalString(const json& j, absl::string_view key, const Field& at) {
  const json* v = Member(j, key);
  if (v == nullptr) return std::string();
  if (!v->is_string()) return TypeError(at[key], "a string", *v);
  return v->get<std::string>();
}

absl::StatusOr<std::vector<std::string>> OptionalStrings(const json& j, absl::string_view key,
                                                         const Field& at) {
  std::vector<std::string> out;
  const json* v = Member(j, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return TypeError(at[key], "an array of strings", *v);
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_string()) return TypeError(at[key][i], "a string", e);
    out.push_back(e.get<std::string>());
  }
  return out;
}

const json* RequiredArray(const json& j, absl::string_view key, const Field& at,
                          absl::Status* error) {
  const json* v = Member(j, key);
  if (v == nullptr) {
    *error = at[key].Error("required");
  } else if (!v->is_array()) {
    *error = TypeError(at[key], "an array", *v);
  }
  return error->ok() ? v : nullptr;
}

absl::Status CheckDigest(absl::string_view digest, const Field& at) {
  if (spec::IsSha256Digest(digest)) return absl::OkStatus();
  return at.Error(absl::StrCat("expected sha256:<64 hex>, got \"", digest.substr(0, 80), "\""));
}

absl::Status CheckSchemaVersion(const json& j, const Field& at) {
  const json* v = Member(j, "schemaVersion");
  if (v == nullptr) return at["schemaVersion"].Error("required (2)");
  if (!v->is_number_integer() || v->get<int64_t>() != 2) {
    return at["schemaVersion"].Error(absl::StrCat("expected 2, got ", v->dump()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Platform> ParsePlatform(const json& j, const Field& at) {
  if (!j.is_object()) return TypeError(at, "an object", j);
  Platform p;
  ASSIGN_OR_RETURN(p.os, RequiredString(j, "os", at));
  ASSIGN_OR_RETURN(p.architecture, RequiredString(j, "architecture", at));
  ASSIGN_OR_RETURN(p.variant, OptionalString(j, "variant", at));
  return p;
}

absl::StatusOr<int64_t> ParseSize(const json& j, const Field& at) {
  const json* size = Member(j, "size");
  if (size == nullptr) return at["size"].Error("required");
  if (size->is_number_unsigned()) {
    if (size->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return at["size"].Error(absl::StrCat("too large: ", size->dump()));
    }
  } else if (!size->is_number_integer()) {
    return at["size"].Error(absl::StrCat("expected an integer >= 0, got ", size->dump()));
  }
  int64_t n = size->get<int64_t>();
  if (n < 0) return at["size"].Error(absl::StrCat("expected >= 0, got ", n));
  return n;
}

absl::StatusOr<Descriptor> ParseDescriptor(const json& j, const Field& at) {
  if (!j.is_object()) return TypeError(at, "an object (a descriptor)", j);
  Descriptor d;
  ASSIGN_OR_RETURN(d.media_type, RequiredString(j, "mediaType", at));
  if (d.media_type.empty()) return at["mediaType"].Error("must not be empty");
  ASSIGN_OR_RETURN(d.digest, RequiredString(j, "digest", at));
  RETURN_IF_ERROR(CheckDigest(d.digest, at["digest"]));
  ASSIGN_OR_RETURN(d.size, ParseSize(j, at));
  if (const json* p = Member(j, "platform")) {
    ASSIGN_OR_RETURN(d.platform, ParsePlatform(*p, at["platform"]));
  }
  return d;
}

absl::StatusOr<std::vector<Descriptor>> ParseDescriptors(const json& j, absl::string_view key,
                                                         const Field& at) {
  absl::Status error;
  const json* list = RequiredArray(j, key, at, &error);
  if (list == nullptr) return error;
  std::vector<Descriptor> out;
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor((*list)[i], at[key][i]));
    out.push_back(std::move(d));
  }
  return out;
}

std::string PlatformName(const Platform& p) {
  std::string s = absl::StrCat(p.os, "/", p.architecture);
  if (!p.variant.empty()) absl::StrAppend(&s, "/", p.variant);
  return s;
}

}  // namespace

bool IsIndexMediaType(absl::string_view media_type) {
  return media_type == kOciIndex || media_type == kDockerManifestList;
}

bool IsManifestMediaType(absl::string_view media_type) {
  return media_type == kOciManifest || media_type == kDockerManifest;
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text) {
  const Field at("manifest");
  ASSIGN_OR_RETURN(json j, ParseDocument(text, at));
  RETURN_IF_ERROR(CheckSchemaVersion(j, at));
  Manifest m;
  ASSIGN_OR_RETURN(m.media_type, OptionalString(j, "mediaType", at));
  if (m.media_type.empty()) {
    m.media_type = std::string(kOciManifest);  // optional in OCI; Docker always sets it
  } else if (!IsManifestMediaType(m.media_type)) {
    return at["mediaType"].Error(absl::StrCat("expected an image manifest type (", kOciManifest,
                                              " or ", kDockerManifest, "), got ", m.media_type));
  }
  const json* config = Member(j, "config");
  if (config == nullptr) return at["config"].Error("required");
  ASSIGN_OR_RETURN(m.config, ParseDescriptor(*config, at["config"]));
  ASSIGN_OR_RETURN(m.layers, ParseDescriptors(j, "layers", at));
  return m;
}

absl::StatusOr<Index> ParseIndex(absl::string_view text) {
  const Field at("index");
  ASSIGN_OR_RETURN(json j, ParseDocument(text, at));
  RETURN_IF_ERROR(CheckSchemaVersion(j, at));
  ASSIGN_OR_RETURN(std::string media_type, OptionalString(j, "mediaType", at));
  if (!media_type.empty() && !IsIndexMediaType(media_type)) {
    return at["mediaType"].Error(absl::StrCat("expected an index type (", kOciIndex, " or ",
                                              kDockerManifestList, "), got ", media_type));
  }
  Index index;
  ASSIGN_OR_RETURN(index.manifests, ParseDescriptors(j, "manifests", at));
  return index;
}

absl::StatusOr<ImageConfig> ParseImageConfig(absl::string_view text) {
  const Field at("config");
  ASSIGN_OR_RETURN(json j, ParseDocument(text, at));
  ImageConfig c;
  ASSIGN_OR_RETURN(c.architecture, RequiredString(j, "architecture", at));
  ASSIGN_OR_RETURN(c.os, RequiredString(j, "os", at));
  if (const json* run = Member(j, "config")) {
    const Field f = at["config"];
    if (!run->is_object()) return TypeError(f, "an object", *run);
    ASSIGN_OR_RETURN(c.entrypoint, OptionalStrings(*run, "Entrypoint", f));
    ASSIGN_OR_RETURN(c.cmd, OptionalStrings(*run, "Cmd", f));
    ASSIGN_OR_RETURN(c.env, OptionalStrings(*run, "Env", f));
    for (size_t i = 0; i < c.env.size(); ++i) {
      const std::string& e = c.env[i];
      if (e.empty() || e.front() == '=' || e.find('=') == std::string::npos) {
        return f["Env"][i].Error(absl::StrCat("expected \"NAME=value\", got \"", e, "\""));
      }
    }
    ASSIGN_OR_RETURN(c.working_dir, OptionalString(*run, "WorkingDir", f));
    ASSIGN_OR_RETURN(c.user, OptionalString(*run, "User", f));
  }
  const json* rootfs = Member(j, "rootfs");
  const Field r = at["rootfs"];
  if (rootfs == nullptr) return r.Error("required");
  if (!rootfs->is_object()) return TypeError(r, "an object", *rootfs);
  ASSIGN_OR_RETURN(std::string type, RequiredString(*rootfs, "type", r));
  if (type != "layers")
    return r["type"].Error(absl::StrCat("expected \"layers\", got \"", type, "\""));
  absl::Status error;
  if (RequiredArray(*rootfs, "diff_ids", r, &error) == nullptr) return error;
  ASSIGN_OR_RETURN(c.diff_ids, OptionalStrings(*rootfs, "diff_ids", r));
  for (size_t i = 0; i < c.diff_ids.size(); ++i) {
    RETURN_IF_ERROR(CheckDigest(c.diff_ids[i], r["diff_ids"][i]));
  }
  return c;
}

std::string HostArchitecture() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#elif defined(__i386__)
  return "386";
#elif defined(__arm__)
  return "arm";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "ppc64le";
#elif defined(__s390x__)
  return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  struct utsname u;
  if (uname(&u) != 0) return "unknown";
  return u.machine;
#endif
}

absl::StatusOr<Descriptor> SelectPlatform(const Index& index) {
  const std::string arch = HostArchitecture();
  std::vector<std::string> seen;
  for (const Descriptor& d : index.manifests) {
    if (!d.platform) {
      seen.push_back("(no platform)");
      continue;
    }
    const Platform& p = *d.platform;
    if (p.os == "linux" && p.architecture == arch) {
      // arm64 images are all v8; an index that lists arm64/v9 next to v8 comes after it.
      if (arch == "arm64" && !p.variant.empty() && p.variant != "v8") {
        seen.push_back(PlatformName(p));
        continue;
      }
      return d;
    }
    seen.push_back(PlatformName(p));
  }
  return absl::NotFoundError(absl::StrCat(
      "the image has no manifest for linux/", arch,
      "; it has: ", seen.empty() ? std::string("nothing") : absl::StrJoin(seen, ", ")));
}

}  // namespace paceline::image
