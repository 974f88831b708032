#include "image/image_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status.h"
#include "image/digest.h"
#include "image/layer_unpack.h"
#include "image/rootfs_path.h"
#include "nlohmann/json.hpp"

namespace paceline::image {
namespace {

namespace fs = std::filesystem;
using internal::IoError;
using nlohmann::json;

absl::Status FsError(const std::error_code& ec, absl::string_view what) {
  return IoError(ec.value(), what);
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `data` to `path` atomically and durably (temp file, fsync, rename, fsync dir).
absl::Status WriteDurably(const std::string& path, absl::string_view data) {
  return WriteFileAtomically(
      path, data, {.mode = 0644, .dir_sync = AtomicWriteOptions::DirSync::kBestEffort}, IoError);
}

// Holds the store's flock for one change (across processes).
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

int64_t ToSeconds(absl::Time t) { return t == absl::InfinitePast() ? 0 : absl::ToUnixSeconds(t); }
absl::Time FromSeconds(int64_t s) {
  return s == 0 ? absl::InfinitePast() : absl::FromUnixSeconds(s);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ImageStore>> ImageStore::Open(ImageStoreOptions options) {
  std::error_code ec;
  for (const char* sub : {"rootfs", "configs", "tmp"}) {
    fs::create_directories(absl::StrCat(options.dir, "/", sub), ec);
    if (ec) return FsError(ec, absl::StrCat("create ", options.dir, "/", sub));
  }
  // What a crash left in tmp/ is incomplete by construction.
  for (const fs::directory_entry& e : fs::directory_iterator(options.dir + "/tmp", ec)) {
    std::error_code ignored;
    fs::remove_all(e.path(), ignored);
  }
  std::unique_ptr<ImageStore> store(new ImageStore(std::move(options)));
  absl::MutexLock lock(&store->mu_);
  RETURN_IF_ERROR(store->ReloadLocked());
  return store;
}

absl::Status ImageStore::ReloadLocked() {
  std::string path = absl::StrCat(options_.dir, "/index.json");
  if (!fs::exists(path)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("images") || !j["images"].is_array()) {
    return absl::DataLossError(absl::StrCat(path, ": not an image index; remove it to start over"));
  }
  std::map<std::string, CachedImage> loaded;
  for (const json& e : j["images"]) {
    CachedImage img;
    img.config_digest = e.value("config", "");
    std::string hex = DigestHex(img.config_digest);
    if (hex.empty()) continue;
    img.manifest_digest = e.value("manifest", "");
    img.refs = e.value("refs", std::vector<std::string>{});
    img.size_bytes = e.value("size", int64_t{0});
    img.pulled = FromSeconds(e.value("pulled", int64_t{0}));
    img.last_used = FromSeconds(e.value("last_used", int64_t{0}));
    img.rootfs = absl::StrCat(options_.dir, "/rootfs/", hex);
    absl::StatusOr<std::string> config =
        ReadWhole(absl::StrCat(options_.dir, "/configs/", hex, ".json"));
    if (!config.ok() || !fs::is_directory(img.rootfs)) continue;  // removed meanwhile
    absl::StatusOr<ImageConfig> parsed = ParseImageConfig(*config);
    if (!parsed.ok()) continue;
    img.config = *std::move(parsed);
    if (auto it = images_.find(img.config_digest); it != images_.end()) {
      img.pins = it->second.pins;
      img.last_used = std::max(img.last_used, it->second.last_used);
    }
    loaded[img.config_digest] = std::move(img);
  }
  // Pinned images stay known even if another process dropped them from the index.
  for (auto& [digest, img] : images_) {
    if (img.pins > 0 && !loaded.contains(digest)) loaded[digest] = img;
  }
  images_ = std::move(loaded);
  return absl::OkStatus();
}

absl::Status ImageStore::SaveLocked() {
  json images = json::array();
  for (const auto& [digest, img] : images_) {
    images.push_back({{"config", img.config_digest},
                      {"manifest", img.manifest_digest},
                      {"refs", img.refs},
                      {"size", img.size_bytes},
                      {"pulled", ToSeconds(img.pulled)},
                      {"last_used", ToSeconds(img.last_used)}});
  }
  return WriteDurably(absl::StrCat(options_.dir, "/index.json"),
                      json{{"images", std::move(images)}}.dump(1));
}

CachedImage* ImageStore::FindByRefLocked(const std::string& ref) {
  for (auto& [digest, img] : images_) {
    if (std::find(img.refs.begin(), img.refs.end(), ref) != img.refs.end()) return &img;
  }
  return nullptr;
}

std::optional<CachedImage> ImageStore::Lookup(const std::string& ref) {
  absl::MutexLock lock(&mu_);
  if (CachedImage* img = FindByRefLocked(ref)) return *img;
  // Another process (`paceline image load`) may have added it.
  if (!ReloadLocked().ok()) return std::nullopt;
  if (CachedImage* img = FindByRefLocked(ref)) return *img;
  return std::nullopt;
}

absl::StatusOr<CachedImage> ImageStore::Pull(const std::string& ref, ImageSource& source) {
  std::string work;
  {
    absl::MutexLock lock(&mu_);
    work = absl::StrCat(options_.dir, "/tmp/pull-", ::getpid(), "-", next_tmp_++);
  }
  std::error_code ec;
  fs::create_directories(work + "/rootfs", ec);
  if (ec) return FsError(ec, absl::StrCat("create ", work));
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};

  ASSIGN_OR_RETURN(FetchedManifest fetched, source.Manifest());
  ASSIGN_OR_RETURN(Manifest manifest, ParseManifest(fetched.body));
  std::string config_path = work + "/config.json";
  RETURN_IF_ERROR(source.FetchBlob(manifest.config, config_path));
  ASSIGN_OR_RETURN(std::string config_text, ReadWhole(config_path));
  ASSIGN_OR_RETURN(ImageConfig config, ParseImageConfig(config_text));
  if (!config.os.empty() && config.os != "linux") {
    return absl::FailedPreconditionError(
        absl::StrCat("image ", ref, " is built for ", config.os, ", not linux"));
  }
  if (config.diff_ids.size() != manifest.layers.size()) {
    return absl::DataLossError(absl::StrCat("image ", ref, ": the manifest has ",
                                            manifest.layers.size(), " layers but the config ",
                                            config.diff_ids.size(), " diff_ids"));
  }
  CachedImage image;
  image.config_digest = manifest.config.digest;
  image.manifest_digest = fetched.digest;
  image.config = config;
  {
    absl::MutexLock lock(&mu_);
    if (images_.contains(image.config_digest)) {
      return CommitLocked(ref, std::move(image), "");
    }
  }
  int64_t bytes = 0;
  for (size_t i = 0; i < manifest.layers.size(); ++i) {
    std::string layer = absl::StrCat(work, "/layer-", i);
    RETURN_IF_ERROR(source.FetchBlob(manifest.layers[i], layer));
    UnpackStats stats;
    absl::Status applied = ApplyLayer(layer, work + "/rootfs", config.diff_ids[i], &stats);
    if (!applied.ok()) {
      return WithContext(applied, absl::StrCat("image ", ref, ": layer ", i, " (",
                                               manifest.layers[i].digest, ")"));
    }
    bytes += stats.bytes;
    fs::remove(layer, ec);
  }
  image.size_bytes = bytes;
  RETURN_IF_ERROR(
      WriteDurably(absl::StrCat(options_.dir, "/configs/", DigestHex(image.config_digest), ".json"),
                   config_text));
  absl::MutexLock lock(&mu_);
  return CommitLocked(ref, std::move(image), work + "/rootfs");
}

absl::StatusOr<CachedImage> ImageStore::CommitLocked(const std::string& ref, CachedImage image,
                                                     const std::string& built_rootfs) {
  FileLock file_lock(absl::StrCat(options_.dir, "/lock"));
  RETURN_IF_ERROR(ReloadLocked());
  absl::Time now = absl::Now();
  auto it = images_.find(image.config_digest);
  if (it == images_.end()) {
    std::string hex = DigestHex(image.config_digest);
    image.rootfs = absl::StrCat(options_.dir, "/rootfs/", hex);
    std::error_code ec;
    if (fs::exists(image.rootfs)) fs::remove_all(image.rootfs, ec);  // an orphan of a crash
    fs::rename(built_rootfs, image.rootfs, ec);
    if (ec) return FsError(ec, absl::StrCat("rename into ", image.rootfs));
    image.pulled = now;
    it = images_.emplace(image.config_digest, std::move(image)).first;
  }
  CachedImage& img = it->second;
  // A tag names one image at a time: a newer pull of the tag takes it from the older image.
  for (auto& [digest, other] : images_) {
    if (digest != img.config_digest) std::erase(other.refs, ref);
  }
  if (std::find(img.refs.begin(), img.refs.end(), ref) == img.refs.end()) img.refs.push_back(ref);
  img.last_used = now;
  RETURN_IF_ERROR(SaveLocked());
  return img;
}

std::optional<CachedImage> ImageStore::Find(const std::string& config_digest) {
  absl::MutexLock lock(&mu_);
  auto it = images_.find(config_digest);
  if (it == images_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<CachedImage> ImageStore::Pin(const std::string& config_digest, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = images_.find(config_digest);
  if (it == images_.end()) {
    return absl::NotFoundError(absl::StrCat("image ", config_digest, " is not in the cache"));
  }
  ++it->second.pins;
  it->second.last_used = std::max(it->second.last_used, now);
  return it->second;
}

void ImageStore::Unpin(const std::string& config_digest) {
  absl::MutexLock lock(&mu_);
  auto it = images_.find(config_digest);
  if (it != images_.end() && it->second.pins > 0) --it->second.pins;
}

std::vector<CachedImage> ImageStore::List() {
  absl::MutexLock lock(&mu_);
  ReloadLocked().IgnoreError();
  std::vector<CachedImage> out;
  for (const auto& [digest, img] : images_) out.push_back(img);
  return out;
}

int64_t ImageStore::TotalBytes() {
  absl::MutexLock lock(&mu_);
  int64_t total = 0;
  for (const auto& [digest, img] : images_) total += img.size_bytes;
  return total;
}

int ImageStore::CollectGarbage() {
  absl::MutexLock lock(&mu_);
  FileLock file_lock(absl::StrCat(options_.dir, "/lock"));
  if (!ReloadLocked().ok()) return 0;
  int64_t total = 0;
  std::vector<CachedImage*> idle;
  for (auto& [digest, img] : images_) {
    total += img.size_bytes;
    if (img.pins == 0) idle.push_back(&img);
  }
  std::sort(idle.begin(), idle.end(),
            [](const CachedImage* a, const CachedImage* b) { return a->last_used < b->last_used; });
  std::vector<std::string> gone;
  for (CachedImage* img : idle) {
    if (total <= options_.size_limit_bytes) break;
    // Out of the index first, then off the disk: a crash in between leaves only an orphan
    // tree, which a later pull of the image replaces.
    gone.push_back(img->config_digest);
    total -= img->size_bytes;
  }
  if (gone.empty()) return 0;
  std::map<std::string, CachedImage> removed;
  for (const std::string& d : gone) removed[d] = std::move(images_[d]), images_.erase(d);
  if (!SaveLocked().ok()) {
    images_.merge(removed);
    return 0;
  }
  for (const auto& [digest, img] : removed) {
    std::error_code ec;
    fs::remove_all(img.rootfs, ec);
    fs::remove(absl::StrCat(options_.dir, "/configs/", DigestHex(digest), ".json"), ec);
  }
  return static_cast<int>(removed.size());
}

}  // namespace paceline::image
