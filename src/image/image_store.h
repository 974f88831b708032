#pragma once
// ImageStore: a host's cache of OCI images (docs/containers.md "The image cache"), on disk
// under one directory, content-addressed and shared by every task of the host:
//
//   DIR/rootfs/<config hex>/   an image's layers unpacked, bottom first, into one tree; the
//                              key is the digest of the image's config, which names every
//                              layer (its diff_ids), so two tags of one image share it
//   DIR/configs/<config hex>.json   the image config (verified against its digest)
//   DIR/index.json             references -> images, sizes and last use (written atomically)
//   DIR/tmp/                   pulls in progress; emptied when the store opens
//   DIR/lock                   flock: one writer at a time across processes (the agent and
//                              `paceline image load`)
//
// An image becomes visible only once complete and verified: its tree is built in tmp/ and
// renamed into rootfs/, then the index is replaced. A pull that fails (registry error, digest
// mismatch, unsafe layer, full disk) leaves nothing behind, so a half-downloaded image is never
// used. Images in use by a task are pinned (reference-counted in memory); when the cache is
// above its size limit, unpinned images go, least recently used first.
//
// Thread-safety: all methods are thread-safe (a mutex; pulls do their I/O outside it).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "image/image_source.h"
#include "image/oci_types.h"

namespace paceline::image {

struct CachedImage {
  std::string config_digest;      // the key
  std::string manifest_digest;    // of the manifest it was pulled by
  std::vector<std::string> refs;  // references that name it ("registry/repo:tag", "…@sha256:…")
  ImageConfig config;
  std::string rootfs;  // DIR/rootfs/<hex>
  int64_t size_bytes = 0;
  absl::Time pulled = absl::InfinitePast();
  absl::Time last_used = absl::InfinitePast();
  int pins = 0;  // tasks using it now
};

struct ImageStoreOptions {
  std::string dir;
  int64_t size_limit_bytes = int64_t{20} << 30;  // unpinned images beyond this are collected
};

class ImageStore {
 public:
  // Creates DIR if needed, empties DIR/tmp, reads the index.
  static absl::StatusOr<std::unique_ptr<ImageStore>> Open(ImageStoreOptions options);

  // The image `ref` (canonical form, spec::ImageRef::ToString) names, if cached.
  std::optional<CachedImage> Lookup(const std::string& ref);
  // Fetches the image from `source`, verifies and unpacks it, and records it under `ref`
  // (canonical form). Runs for as long as the download takes; call it off the agent's loop.
  // When the image (same config) is already cached, only the reference is recorded.
  absl::StatusOr<CachedImage> Pull(const std::string& ref, ImageSource& source);

  // The image of a config digest, if cached.
  std::optional<CachedImage> Find(const std::string& config_digest);
  // A task starts / stops using the image (by config digest). Pin fails with NOT_FOUND when
  // the image is not (or no longer) cached.
  absl::StatusOr<CachedImage> Pin(const std::string& config_digest, absl::Time now);
  void Unpin(const std::string& config_digest);

  std::vector<CachedImage> List();
  // Removes unpinned images, least recently used first, until the cache is within its limit;
  // returns how many went.
  int CollectGarbage();
  int64_t TotalBytes();

 private:
  explicit ImageStore(ImageStoreOptions options) : options_(std::move(options)) {}
  absl::Status ReloadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SaveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<CachedImage> CommitLocked(const std::string& ref, CachedImage image,
                                           const std::string& built_rootfs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  CachedImage* FindByRefLocked(const std::string& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ImageStoreOptions options_;
  absl::Mutex mu_;
  std::map<std::string, CachedImage> images_ ABSL_GUARDED_BY(mu_);  // by config digest
  uint64_t next_tmp_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace paceline::image
