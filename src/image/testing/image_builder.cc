#include "image/testing/image_builder.h"

#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "image/digest.h"
#include "image/testing/tar_builder.h"
#include "nlohmann/json.hpp"

namespace paceline::image::testing {
namespace {

using nlohmann::json;

json DescriptorJson(const Descriptor& d) {
  return json{{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
}

json PlatformJson(const Platform& p) {
  json j{{"os", p.os}, {"architecture", p.architecture}};
  if (!p.variant.empty()) j["variant"] = p.variant;
  return j;
}

std::string IndexJson(const std::vector<json>& manifests) {
  return json{{"schemaVersion", 2}, {"mediaType", kOciIndex}, {"manifests", manifests}}.dump();
}

json LayoutIndexEntry(const Image& image, absl::string_view ref_name) {
  json entry = DescriptorJson(image.manifest.descriptor());
  entry["annotations"] = {{"org.opencontainers.image.ref.name", std::string(ref_name)}};
  return entry;
}

constexpr char kOciLayoutFile[] = R"({"imageLayoutVersion":"1.0.0"})";

}  // namespace

Blob MakeBlob(absl::string_view media_type, std::string data) {
  Blob b;
  b.media_type = std::string(media_type);
  b.digest = Sha256Digest(data);
  b.data = std::move(data);
  return b;
}

std::vector<const Blob*> Image::blobs() const {
  std::vector<const Blob*> out{&config};
  for (const Blob& l : layers) out.push_back(&l);
  return out;
}

ImageBuilder::ImageBuilder() {
  config_.os = "linux";
  config_.architecture = HostArchitecture();
}

ImageBuilder& ImageBuilder::Layer(std::string tar) {
  tars_.push_back(std::move(tar));
  return *this;
}
ImageBuilder& ImageBuilder::Entrypoint(std::vector<std::string> v) {
  config_.entrypoint = std::move(v);
  return *this;
}
ImageBuilder& ImageBuilder::Cmd(std::vector<std::string> v) {
  config_.cmd = std::move(v);
  return *this;
}
ImageBuilder& ImageBuilder::Env(std::vector<std::string> v) {
  config_.env = std::move(v);
  return *this;
}
ImageBuilder& ImageBuilder::WorkingDir(std::string dir) {
  config_.working_dir = std::move(dir);
  return *this;
}
ImageBuilder& ImageBuilder::User(std::string user) {
  config_.user = std::move(user);
  return *this;
}
ImageBuilder& ImageBuilder::Architecture(std::string arch) {
  config_.architecture = std::move(arch);
  return *this;
}

Image ImageBuilder::Build() const {
  Image image;
  for (const std::string& tar : tars_) {
    image.diff_ids.push_back(Sha256Digest(tar));
    image.layers.push_back(MakeBlob(kOciLayerGzip, Gzip(tar)));
  }
  json run = json::object();
  if (!config_.entrypoint.empty()) run["Entrypoint"] = config_.entrypoint;
  if (!config_.cmd.empty()) run["Cmd"] = config_.cmd;
  if (!config_.env.empty()) run["Env"] = config_.env;
  if (!config_.working_dir.empty()) run["WorkingDir"] = config_.working_dir;
  if (!config_.user.empty()) run["User"] = config_.user;
  json config{{"architecture", config_.architecture},
              {"os", config_.os},
              {"config", run},
              {"rootfs", {{"type", "layers"}, {"diff_ids", image.diff_ids}}}};
  image.config = MakeBlob(kOciConfig, config.dump());
  json layers = json::array();
  for (const Blob& l : image.layers) layers.push_back(DescriptorJson(l.descriptor()));
  json manifest{{"schemaVersion", 2},
                {"mediaType", kOciManifest},
                {"config", DescriptorJson(image.config.descriptor())},
                {"layers", layers}};
  image.manifest = MakeBlob(kOciManifest, manifest.dump());
  return image;
}

std::string Gzip(absl::string_view data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper with an empty header (no name, mtime 0).
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Blob MakeIndex(const std::vector<std::pair<Blob, Platform>>& manifests) {
  std::vector<json> entries;
  for (const auto& [manifest, platform] : manifests) {
    json e = DescriptorJson(manifest.descriptor());
    e["platform"] = PlatformJson(platform);
    entries.push_back(std::move(e));
  }
  return MakeBlob(kOciIndex, IndexJson(entries));
}

absl::StatusOr<Image> BusyboxImage() {
  const char* kBusybox = "/bin/busybox";
  std::ifstream in(kBusybox, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string busybox = s.str();
  if (!in || busybox.size() < 4 ||
      busybox.compare(0, 4,
                      "\x7f"
                      "ELF") != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kBusybox, " is missing or not an executable: apt-get install busybox-static"));
  }
  TarBuilder tar;
  tar.Dir("bin", 0755).File("bin/busybox", busybox, 0755);
  for (const char* applet :
       {"sh", "echo", "cat", "ls", "sleep", "touch", "id", "env", "test", "wc", "mkdir"}) {
    tar.Symlink("busybox", absl::StrCat("bin/", applet));
  }
  tar.Dir("etc", 0755)
      .File("etc/passwd",
            "root:x:0:0:root:/root:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
      .File("etc/group", "root:x:0:\nnogroup:x:65534:\n")
      .Dir("root", 0700)
      .Dir("tmp", 01777);
  return ImageBuilder()
      .Layer(tar.Finish(/*gzip=*/false))
      .Cmd({"/bin/sh"})
      .Env({"PATH=/bin"})
      .Build();
}

absl::Status WriteOciLayout(const Image& image, const std::string& dir,
                            absl::string_view ref_name) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/blobs/sha256", ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, "/blobs/sha256: ", ec.message()));
  auto write = [](const std::string& path, absl::string_view content) -> absl::Status {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
    return absl::OkStatus();
  };
  std::vector<const Blob*> blobs = image.blobs();
  blobs.push_back(&image.manifest);
  for (const Blob* b : blobs) {
    absl::Status s = write(absl::StrCat(dir, "/blobs/sha256/", DigestHex(b->digest)), b->data);
    if (!s.ok()) return s;
  }
  absl::Status s = write(dir + "/oci-layout", kOciLayoutFile);
  if (!s.ok()) return s;
  return write(dir + "/index.json", IndexJson({LayoutIndexEntry(image, ref_name)}));
}

std::string OciLayoutTar(const Image& image, absl::string_view ref_name) {
  TarBuilder tar;
  tar.File("oci-layout", kOciLayoutFile)
      .File("index.json", IndexJson({LayoutIndexEntry(image, ref_name)}))
      .Dir("blobs")
      .Dir("blobs/sha256");
  std::vector<const Blob*> blobs = image.blobs();
  blobs.push_back(&image.manifest);
  for (const Blob* b : blobs) {
    tar.File(absl::StrCat("blobs/sha256/", DigestHex(b->digest)), b->data);
  }
  return tar.Finish(/*gzip=*/false);
}

}  // namespace paceline::image::testing
