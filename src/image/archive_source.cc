#include "image/archive_source.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/status.h"
#include "image/digest.h"
#include "image/rootfs_path.h"
#include "nlohmann/json.hpp"
#include "spec/image_ref.h"

namespace paceline::image {
namespace {

using internal::Fd;
using internal::IoError;
using internal::IsHex64;
using internal::JoinPath;
using nlohmann::json;

constexpr int64_t kMaxManifestBytes = 4 << 20;     // a manifest or index blob (as the registry)
constexpr int64_t kMaxDocumentBytes = 64 << 20;    // index.json, manifest.json, a config
constexpr int64_t kMaxLayoutFileBytes = 64 << 10;  // oci-layout
constexpr int kMaxIndexDepth = 4;
constexpr int kMaxAliasHops = 8;
constexpr size_t kCopyBuffer = 1 << 20;
constexpr const char* kNameAnnotations[] = {"org.opencontainers.image.ref.name",
                                            "io.containerd.image.name"};

// `name` as the user wrote it equals `given`, as written or as canonical references.
bool SameName(absl::string_view given, absl::string_view name) {
  if (given == name) return true;
  absl::StatusOr<spec::ImageRef> a = spec::ParseImageRef(given);
  absl::StatusOr<spec::ImageRef> b = spec::ParseImageRef(name);
  return a.ok() && b.ok() && a->ToString() == b->ToString();
}

bool Matches(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names) {
    if (SameName(n, name)) return true;
  }
  return false;
}

void AddNames(std::vector<std::string>* to, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (std::find(to->begin(), to->end(), n) == to->end()) to->push_back(n);
  }
}

absl::Status FieldError(absl::string_view file, absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", field, ": ", what));
}

// One image of the archive as the user may name it.
struct Image {
  std::vector<Descriptor> descriptors;  // OCI: one, or one per platform
  std::string label;                    // for listings: the names, or what it is
  std::vector<std::string> names;
  int docker_index = -1;  // docker: its entry in manifest.json
};

// The image `name` ("" = the only one) of `images`; `what` is the archive, for messages.
absl::StatusOr<const Image*> Choose(const std::vector<Image>& images, const std::string& name,
                                    const std::string& what) {
  std::vector<std::string> labels;
  for (const Image& image : images) labels.push_back(image.label);
  const std::string listing = absl::StrJoin(labels, ", ");
  if (images.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " holds no image"));
  std::vector<const Image*> found;
  for (const Image& image : images) {
    if (name.empty() || Matches(image.names, name)) found.push_back(&image);
  }
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat(what, " has no image named \"", name, "\"; it has: ", listing));
  }
  if (found.size() > 1) {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " holds ", images.size(), " images; name one of: ", listing));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", name, "\" names ", found.size(), " images: ", listing));
  }
  return found.front();
}

absl::StatusOr<std::vector<std::string>> Strings(const json& j, absl::string_view file,
                                                 const std::string& field) {
  std::vector<std::string> out;
  if (!j.is_array()) return FieldError(file, field, "expected an array of strings");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      return FieldError(file, absl::StrCat(field, "[", i, "]"),
                        absl::StrCat("expected a string, got ", j[i].type_name()));
    }
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

// The hex a docker-save file name promises its content hashes to ("<hex>.json",
// "blobs/sha256/<hex>"), "" when it promises nothing ("<id>/layer.tar").
std::string PromisedHex(absl::string_view file) {
  if (absl::ConsumePrefix(&file, "blobs/sha256/")) return std::string(file);
  if (absl::ConsumeSuffix(&file, ".json")) return std::string(file);
  return "";
}

bool IsBlobPath(absl::string_view p) {
  return absl::ConsumePrefix(&p, "blobs/sha256/") && IsHex64(p);
}

}  // namespace

struct ArchiveSource::State {
  std::string path;  // FILE, as given
  bool extracted = false;
  Fd root;  // the layout directory, or the extracted copy
  Fd scratch_parent;
  std::string scratch_name;  // the extracted copy in scratch_dir; removed with the state
  std::map<std::string, std::string> aliases;     // extracted links: file -> file
  std::map<std::string, std::string> blob_files;  // docker save: digest -> file
  std::vector<std::string> names;
  std::vector<Descriptor> top;          // OCI: the image's descriptor(s) in index.json
  std::optional<FetchedManifest> made;  // docker save: the manifest made from manifest.json

  ~State() {
    root = Fd();
    if (!scratch_name.empty()) {
      internal::RemoveTree(scratch_parent.get(), scratch_name).IgnoreError();
    }
  }

  // A file of the archive, for messages.
  std::string Where(absl::string_view rel) const {
    return extracted ? absl::StrCat(rel, " in ", path) : JoinPath(path, rel);
  }

  std::string Resolve(const std::string& rel) const {
    std::string r = rel;
    for (int i = 0; i < kMaxAliasHops; ++i) {
      auto it = aliases.find(r);
      if (it == aliases.end()) break;
      r = it->second;
    }
    return r;
  }

  bool Exists(const std::string& rel) const {
    struct stat st;
    return ::fstatat(root.get(), Resolve(rel).c_str(), &st, 0) == 0;
  }

  std::string BlobFile(const std::string& digest) const {
    auto it = blob_files.find(digest);
    return it != blob_files.end() ? it->second : absl::StrCat("blobs/sha256/", DigestHex(digest));
  }

  // The regular file `rel`, open for reading; `st` is set.
  absl::StatusOr<Fd> OpenFile(const std::string& rel, struct stat* st) const {
    int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (extracted ? O_NOFOLLOW : 0);
    Fd fd(::openat(root.get(), Resolve(rel).c_str(), flags));
    if (!fd.valid()) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return absl::NotFoundError(absl::StrCat(Where(rel), ": missing"));
      }
      return IoError(errno, absl::StrCat("open ", Where(rel)));
    }
    if (::fstat(fd.get(), st) != 0) return IoError(errno, absl::StrCat("stat ", Where(rel)));
    if (!S_ISREG(st->st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(Where(rel), ": not a regular file"));
    }
    return fd;
  }

  absl::StatusOr<std::string> ReadFile(const std::string& rel, int64_t limit) const {
    struct stat st;
    ASSIGN_OR_RETURN(Fd fd, OpenFile(rel, &st));
    if (st.st_size > limit) {
      return absl::FailedPreconditionError(
          absl::StrCat(Where(rel), ": larger than ", limit >> 10, " KiB"));
    }
    std::string out;
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd.get(), buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(errno, absl::StrCat("read ", Where(rel)));
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (static_cast<int64_t>(out.size()) > limit) {
        return absl::FailedPreconditionError(
            absl::StrCat(Where(rel), ": larger than ", limit >> 10, " KiB"));
      }
    }
    return out;
  }

  absl::Status CheckContent(const Descriptor& d, const std::string& rel, int64_t size,
                            const std::string& digest) const {
    if (size != d.size) {
      return absl::DataLossError(absl::StrCat("blob ", d.digest, " (", Where(rel), "): ", size,
                                              " bytes, expected ", d.size));
    }
    if (digest != d.digest) {
      return absl::DataLossError(absl::StrCat("blob ", d.digest, " (", Where(rel),
                                              "): the content has digest ", digest,
                                              "; the archive is corrupt or was altered"));
    }
    return absl::OkStatus();
  }

  // A manifest or index blob, verified.
  absl::StatusOr<std::string> ReadBlob(const Descriptor& d) const {
    const std::string rel = BlobFile(d.digest);
    if (d.size > kMaxManifestBytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          Where(rel), ": a manifest of ", d.size, " bytes (at most ", kMaxManifestBytes, ")"));
    }
    ASSIGN_OR_RETURN(std::string body, ReadFile(rel, kMaxManifestBytes));
    RETURN_IF_ERROR(CheckContent(d, rel, static_cast<int64_t>(body.size()), Sha256Digest(body)));
    return body;
  }

  absl::Status OpenOci(const std::string& name);
  absl::Status OpenDocker(const std::string& name);
  absl::Status Copy(const Descriptor& blob, const std::string& rel, const std::string& to) const;
  absl::Status Verify(const Descriptor& blob, const std::string& rel, const std::string& at) const;
};

absl::Status ArchiveSource::State::OpenOci(const std::string& name) {
  const std::string layout_file = Where("oci-layout");
  if (!Exists("oci-layout")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": has index.json but no oci-layout file: not an OCI image layout"));
  }
  ASSIGN_OR_RETURN(std::string layout, ReadFile("oci-layout", kMaxLayoutFileBytes));
  json l = json::parse(layout, nullptr, /*allow_exceptions=*/false);
  if (l.is_discarded() || !l.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(layout_file, ": not a JSON object"));
  }
  if (!l.contains("imageLayoutVersion") || !l["imageLayoutVersion"].is_string()) {
    return FieldError(layout_file, "imageLayoutVersion", "required (a string)");
  }

  const std::string index_file = Where("index.json");
  ASSIGN_OR_RETURN(std::string text, ReadFile("index.json", kMaxDocumentBytes));
  absl::StatusOr<Index> index = ParseIndex(text);
  if (!index.ok()) return WithContext(index.status(), index_file);
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);  // valid: parsed above
  const json& entries = j["manifests"];

  // index.json's entries, grouped into images: one digest, or one name and a platform each.
  std::vector<Image> images;
  std::map<std::string, size_t> by_digest;
  for (size_t i = 0; i < index->manifests.size(); ++i) {
    const Descriptor& d = index->manifests[i];
    std::vector<std::string> names;
    auto annotations = entries[i].find("annotations");
    if (annotations != entries[i].end() && !annotations->is_null()) {
      const std::string field = absl::StrCat("manifests[", i, "].annotations");
      if (!annotations->is_object()) return FieldError(index_file, field, "expected an object");
      for (const char* key : kNameAnnotations) {
        auto v = annotations->find(key);
        if (v == annotations->end()) continue;
        if (!v->is_string() || v->get<std::string>().empty()) {
          return FieldError(index_file, absl::StrCat(field, ".", key),
                            "expected a non-empty string");
        }
        AddNames(&names, {v->get<std::string>()});
      }
    }
    if (auto it = by_digest.find(d.digest); it != by_digest.end()) {
      AddNames(&images[it->second].names, names);
      continue;
    }
    Image* same = nullptr;  // an image of the same names, per platform
    if (d.platform) {
      for (Image& image : images) {
        if (image.names == names && image.descriptors.front().platform) same = &image;
      }
    }
    if (same != nullptr) {
      same->descriptors.push_back(d);
      by_digest[d.digest] = static_cast<size_t>(same - images.data());
      continue;
    }
    by_digest[d.digest] = images.size();
    images.push_back(Image{{d}, "", names, -1});
  }
  for (Image& image : images) {
    image.label = image.names.empty()
                      ? absl::StrCat("(unnamed ", image.descriptors.front().digest, ")")
                      : absl::StrJoin(image.names, " = ");
  }
  ASSIGN_OR_RETURN(const Image* chosen, Choose(images, name, index_file));
  top = chosen->descriptors;
  names = chosen->names;
  return absl::OkStatus();
}

absl::Status ArchiveSource::State::OpenDocker(const std::string& name) {
  const std::string file = Where("manifest.json");
  ASSIGN_OR_RETURN(std::string text, ReadFile("manifest.json", kMaxDocumentBytes));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(file, ": not valid JSON"));
  if (!j.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": expected an array of images, got ", j.type_name()));
  }
  std::vector<Image> images;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = absl::StrCat("[", i, "]");
    if (!j[i].is_object()) return FieldError(file, at, "expected an object");
    const json& e = j[i];
    if (!e.contains("Config") || !e["Config"].is_string()) {
      return FieldError(file, at + ".Config", "required (a string)");
    }
    if (!e.contains("Layers")) return FieldError(file, at + ".Layers", "required");
    RETURN_IF_ERROR(Strings(e["Layers"], file, at + ".Layers").status());
    Image image;
    image.docker_index = static_cast<int>(i);
    if (e.contains("RepoTags") && !e["RepoTags"].is_null()) {
      ASSIGN_OR_RETURN(std::vector<std::string> tags,
                       Strings(e["RepoTags"], file, at + ".RepoTags"));
      AddNames(&image.names, tags);
    }
    image.label = image.names.empty()
                      ? absl::StrCat("(untagged ", e["Config"].get<std::string>(), ")")
                      : absl::StrJoin(image.names, " = ");
    images.push_back(std::move(image));
  }
  ASSIGN_OR_RETURN(const Image* chosen, Choose(images, name, file));
  names = chosen->names;
  const json& e = j[static_cast<size_t>(chosen->docker_index)];
  const std::string at = absl::StrCat("[", chosen->docker_index, "]");

  // The config: its file name promises its digest.
  std::string config_file(absl::StripPrefix(e["Config"].get<std::string>(), "./"));
  const std::string promised = PromisedHex(config_file);
  if (!IsHex64(promised) || !internal::IsImageArchiveFile(config_file)) {
    return FieldError(file, at + ".Config",
                      absl::StrCat("expected \"<hex>.json\" or \"blobs/sha256/<hex>\", got \"",
                                   config_file, "\""));
  }
  ASSIGN_OR_RETURN(std::string config_text, ReadFile(config_file, kMaxDocumentBytes));
  const std::string config_digest = Sha256Digest(config_text);
  if (DigestHex(config_digest) != promised) {
    return absl::DataLossError(absl::StrCat(Where(config_file), ": the content has digest ",
                                            config_digest,
                                            "; the archive is corrupt or was altered"));
  }
  absl::StatusOr<ImageConfig> config = ParseImageConfig(config_text);
  if (!config.ok()) return WithContext(config.status(), Where(config_file));
  ASSIGN_OR_RETURN(std::vector<std::string> layers, Strings(e["Layers"], file, at + ".Layers"));
  if (config->diff_ids.size() != layers.size()) {
    return absl::DataLossError(absl::StrCat(file, ": ", at, ".Layers: ", layers.size(),
                                            " layers, but the config ", Where(config_file), " has ",
                                            config->diff_ids.size(), " diff_ids"));
  }
  blob_files[config_digest] = config_file;
  json manifest_layers = json::array();
  for (size_t k = 0; k < layers.size(); ++k) {
    std::string layer(absl::StripPrefix(layers[k], "./"));
    const bool is_blob = IsBlobPath(layer);
    if (!is_blob && !(absl::EndsWith(layer, "/layer.tar") && internal::IsImageArchiveFile(layer))) {
      return FieldError(
          file, absl::StrCat(at, ".Layers[", k, "]"),
          absl::StrCat("expected \"<hex>/layer.tar\" or \"blobs/sha256/<hex>\", got \"", layer,
                       "\""));
    }
    struct stat st;
    RETURN_IF_ERROR(OpenFile(layer, &st).status());
    // docker save's layer.tar is the uncompressed layer: its digest is the diff_id (checked as
    // the blob is copied, and again as the store unpacks it).
    const std::string digest =
        is_blob ? absl::StrCat("sha256:", PromisedHex(layer)) : config->diff_ids[k];
    blob_files.emplace(digest, layer);
    manifest_layers.push_back({{"mediaType", std::string(kOciLayerTar)},
                               {"digest", digest},
                               {"size", static_cast<int64_t>(st.st_size)}});
  }
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", std::string(kOciManifest)},
                   {"config",
                    {{"mediaType", std::string(kOciConfig)},
                     {"digest", config_digest},
                     {"size", static_cast<int64_t>(config_text.size())}}},
                   {"layers", std::move(manifest_layers)}};
  FetchedManifest fetched;
  fetched.body = manifest.dump();
  fetched.digest = Sha256Digest(fetched.body);
  fetched.media_type = std::string(kOciManifest);
  made = std::move(fetched);
  return absl::OkStatus();
}

// Hashes the file at `at` (a hard link to `rel`) and checks it against `blob`.
absl::Status ArchiveSource::State::Verify(const Descriptor& blob, const std::string& rel,
                                          const std::string& at) const {
  struct stat st;
  if (::stat(at.c_str(), &st) != 0) return IoError(errno, absl::StrCat("stat ", at));
  if (st.st_size != blob.size) return CheckContent(blob, rel, st.st_size, "");
  ASSIGN_OR_RETURN(std::string digest, Sha256File(at));
  return CheckContent(blob, rel, st.st_size, digest);
}

// Copies `rel` to `to` (created), hashing what is written, and checks it against `blob`.
absl::Status ArchiveSource::State::Copy(const Descriptor& blob, const std::string& rel,
                                        const std::string& to) const {
  struct stat st;
  ASSIGN_OR_RETURN(Fd in, OpenFile(rel, &st));
  if (st.st_size != blob.size) return CheckContent(blob, rel, st.st_size, "");
  Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out.valid()) return IoError(errno, absl::StrCat("create ", to));
  Sha256 hash;
  std::vector<char> buf(kCopyBuffer);
  int64_t total = 0;
  while (true) {
    ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(errno, absl::StrCat("read ", Where(rel)));
    if (n == 0) break;
    total += n;
    if (total > blob.size) break;  // grew meanwhile
    hash.Update(buf.data(), static_cast<size_t>(n));
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out.get(), buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return IoError(errno, absl::StrCat("write ", to));
      done += w;
    }
  }
  if (::close(out.Release()) != 0) return IoError(errno, absl::StrCat("write ", to));
  if (total != blob.size) return CheckContent(blob, rel, total, "");
  return CheckContent(blob, rel, total, hash.Finish());
}

ArchiveSource::ArchiveSource(std::unique_ptr<State> state) : state_(std::move(state)) {}
ArchiveSource::~ArchiveSource() = default;

absl::StatusOr<std::unique_ptr<ArchiveSource>> ArchiveSource::Open(const std::string& path,
                                                                   const std::string& scratch_dir,
                                                                   const std::string& name,
                                                                   const ArchiveLimits& limits) {
  auto s = std::make_unique<State>();
  s->path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return IoError(errno, path);
  if (S_ISDIR(st.st_mode)) {
    s->root = Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!s->root.valid()) return IoError(errno, absl::StrCat("open ", path));
  } else if (S_ISREG(st.st_mode)) {
    std::error_code ec;
    std::filesystem::create_directories(scratch_dir, ec);
    if (ec) return IoError(ec.value(), absl::StrCat("create ", scratch_dir));
    std::string dir = JoinPath(scratch_dir, "archive-XXXXXX");
    if (::mkdtemp(dir.data()) == nullptr) return IoError(errno, absl::StrCat("mkdtemp ", dir));
    s->scratch_parent = Fd(::open(scratch_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!s->scratch_parent.valid()) {
      int err = errno;
      ::rmdir(dir.c_str());
      return IoError(err, absl::StrCat("open ", scratch_dir));
    }
    s->scratch_name = std::filesystem::path(dir).filename().string();
    s->root = Fd(::openat(s->scratch_parent.get(), s->scratch_name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!s->root.valid()) return IoError(errno, absl::StrCat("open ", dir));
    s->extracted = true;
    RETURN_IF_ERROR(internal::ExtractImageArchive(path, s->root.get(), limits, &s->aliases));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": neither a directory nor a file (an image archive)"));
  }
  if (s->Exists("index.json")) {
    RETURN_IF_ERROR(s->OpenOci(name));
  } else if (s->Exists("manifest.json")) {
    RETURN_IF_ERROR(s->OpenDocker(name));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": neither an OCI image layout (oci-layout, index.json) nor a docker save archive "
        "(manifest.json)"));
  }
  return std::unique_ptr<ArchiveSource>(new ArchiveSource(std::move(s)));
}

std::vector<std::string> ArchiveSource::Names() const { return state_->names; }

absl::StatusOr<FetchedManifest> ArchiveSource::Manifest() {
  const State& s = *state_;
  if (s.made) return *s.made;
  Descriptor d;
  if (s.top.size() == 1) {
    d = s.top.front();
  } else {
    absl::StatusOr<Descriptor> picked = SelectPlatform(Index{s.top});
    if (!picked.ok()) return WithContext(picked.status(), s.Where("index.json"));
    d = *std::move(picked);
  }
  for (int depth = 0;; ++depth) {
    const std::string rel = s.BlobFile(d.digest);
    if (IsManifestMediaType(d.media_type)) {
      ASSIGN_OR_RETURN(std::string body, s.ReadBlob(d));
      return FetchedManifest{std::move(body), d.digest, d.media_type};
    }
    if (!IsIndexMediaType(d.media_type)) {
      return absl::FailedPreconditionError(
          absl::StrCat(s.Where(rel), ": media type \"", d.media_type,
                       "\" is neither an image manifest nor an index"));
    }
    if (depth >= kMaxIndexDepth) {
      return absl::FailedPreconditionError(
          absl::StrCat(s.Where(rel), ": indexes nested more than ", kMaxIndexDepth, " deep"));
    }
    ASSIGN_OR_RETURN(std::string body, s.ReadBlob(d));
    absl::StatusOr<Index> index = ParseIndex(body);
    if (!index.ok()) return WithContext(index.status(), s.Where(rel));
    absl::StatusOr<Descriptor> picked = SelectPlatform(*index);
    if (!picked.ok()) return WithContext(picked.status(), s.Where(rel));
    d = *std::move(picked);
  }
}

absl::Status ArchiveSource::FetchBlob(const Descriptor& blob, const std::string& path) {
  const State& s = *state_;
  if (DigestHex(blob.digest).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("not a sha256 digest: \"", blob.digest, "\""));
  }
  const std::string rel = s.BlobFile(blob.digest);
  const std::string partial = path + ".partial";
  ::unlink(partial.c_str());
  absl::Status status;
  // An extracted file is ours and never changes: a hard link saves the copy. Across file
  // systems (or when linking is not allowed), it is copied as a layout's file is.
  if (s.extracted &&
      ::linkat(s.root.get(), s.Resolve(rel).c_str(), AT_FDCWD, partial.c_str(), 0) == 0) {
    status = s.Verify(blob, rel, partial);
  } else {
    status = s.Copy(blob, rel, partial);
  }
  if (status.ok() && ::rename(partial.c_str(), path.c_str()) != 0) {
    status = IoError(errno, absl::StrCat("rename ", partial, " to ", path));
  }
  if (!status.ok()) ::unlink(partial.c_str());
  return status;
}

}  // namespace paceline::image
