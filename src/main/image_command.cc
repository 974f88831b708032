// `paceline image load FILE` and `paceline image list`: a host's image cache, read and written
// in place (image/image_store.h), for hosts that cannot reach a registry (docs/containers.md
// "Air-gapped hosts"). They work on the directory alone, with the agent running or not: the
// cache's file lock orders them with the agent's own pulls, and the agent finds a loaded image
// the next time a task asks for it.

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/table.h"
#include "common/units.h"
#include "image/archive_source.h"
#include "image/image_store.h"
#include "main/commands.h"
#include "spec/image_ref.h"

namespace paceline::cli {
namespace {

constexpr const char* kImageGroupHelp = "OCI images in a host's cache (for containers)";

struct ImageFlags {
  std::string work_dir;
  std::string image_dir;
  std::string file;
  std::string name;
  std::vector<std::string> tags;
};

absl::StatusOr<std::string> ImageDir(const ImageFlags& f) {
  if (!f.image_dir.empty()) return f.image_dir;
  if (!f.work_dir.empty()) return f.work_dir + "/images";
  return absl::InvalidArgumentError(
      "give the agent's --work-dir (its cache is WORK_DIR/images) or --image-dir");
}

void AddDirFlags(CLI::App* cmd, ImageFlags& f) {
  cmd->add_option("--work-dir", f.work_dir, "the agent's work dir (the cache is WORK_DIR/images)");
  cmd->add_option("--image-dir", f.image_dir, "the cache itself, when the agent has --image-dir");
}

void Load(CommandContext& ctx, const ImageFlags& f) {
  absl::StatusOr<std::string> dir = ImageDir(f);
  if (!dir.ok()) return ctx.Fail(dir.status());
  absl::StatusOr<std::unique_ptr<image::ImageStore>> store =
      image::ImageStore::Open({.dir = *dir, .size_limit_bytes = INT64_MAX});
  if (!store.ok()) return ctx.Fail(store.status());
  absl::StatusOr<std::unique_ptr<image::ArchiveSource>> source =
      image::ArchiveSource::Open(f.file, *dir + "/tmp", f.name);
  if (!source.ok()) return ctx.Fail(source.status());
  // The references tasks will name it by: --tag, else the names the archive gives it.
  std::vector<std::string> refs;
  for (const std::string& name : f.tags.empty() ? (*source)->Names() : f.tags) {
    absl::StatusOr<spec::ImageRef> ref = spec::ParseImageRef(name);
    if (!ref.ok()) {
      if (!f.tags.empty()) return ctx.Fail(WithFlag(ref.status(), "--tag"));
      continue;  // e.g. a bare "latest" annotation
    }
    refs.push_back(ref->ToString());
  }
  if (refs.empty()) {
    return ctx.Fail(absl::InvalidArgumentError(absl::StrCat(
        f.file, " names its image with no full reference; give one with --tag REGISTRY/REPO:TAG")));
  }
  for (const std::string& ref : refs) {
    absl::StatusOr<image::CachedImage> img = (*store)->Pull(ref, **source);
    if (!img.ok()) return ctx.Fail(img.status());
    std::cout << "loaded " << ref << " (" << img->config_digest.substr(0, 19) << ", "
              << FormatBytesApprox(img->size_bytes) << ") into " << *dir << std::endl;
  }
}

void List(CommandContext& ctx, const ImageFlags& f) {
  absl::StatusOr<std::string> dir = ImageDir(f);
  if (!dir.ok()) return ctx.Fail(dir.status());
  absl::StatusOr<std::unique_ptr<image::ImageStore>> store =
      image::ImageStore::Open({.dir = *dir, .size_limit_bytes = INT64_MAX});
  if (!store.ok()) return ctx.Fail(store.status());
  Table table({"IMAGE", "REFERENCES", "SIZE", "LAST USED"});
  for (const image::CachedImage& img : (*store)->List()) {
    table.AddRow({img.config_digest.substr(0, 19), absl::StrJoin(img.refs, ","),
                  FormatBytesApprox(img.size_bytes),
                  img.last_used == absl::InfinitePast()
                      ? "-"
                      : absl::FormatTime("%Y-%m-%d %H:%M:%S", img.last_used, absl::UTCTimeZone())});
  }
  std::cout << table.Render();
}

}  // namespace

void RegisterImageCommands(CLI::App& app, CommandContext& ctx) {
  static ImageFlags flags;
  CLI::App* group = AddGroup(app, "image", kImageGroupHelp);
  CLI::App* load = group->add_subcommand(
      "load",
      "import an OCI image layout (directory or tar) or a `docker save` tarball into a "
      "host's image cache");
  load->add_option("FILE", flags.file, "the image archive")->required();
  AddDirFlags(load, flags);
  load->add_option("--name", flags.name, "which image of the archive (default: its only one)");
  load->add_option("--tag", flags.tags,
                   "record it as this reference, e.g. registry.example.com/app:1.4 (repeatable; "
                   "default: the names the archive gives it)");
  load->callback([&ctx] { Load(ctx, flags); });
  CLI::App* list = group->add_subcommand("list", "the images in a host's cache");
  AddDirFlags(list, flags);
  list->callback([&ctx] { List(ctx, flags); });
}

}  // namespace paceline::cli
